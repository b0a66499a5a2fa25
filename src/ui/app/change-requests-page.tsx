/**
 * Change requests (docs/ui.md#change-control): listed by state, newest first; each opens to its
 * diff against what its environment serves now, its approvals and comments, and the buttons the
 * signed-in person may use: `Approve` and `Reject` (with `flag:approve` there, never the author),
 * `Apply` (the author or an approver, once approved), `Cancel` (the author).
 */

import { useEffect, useState } from 'preact/hooks'
import { grants } from '../../domain/permission.ts'
import { api } from './api.ts'
import { shortTime } from './audit-diff.ts'
import { listenForChanges } from './live.ts'
import { done, NoticeLine, refused, useOutcome } from './notice.tsx'

type Actor = { type: string; id: string; name: string }
type Review = { by: Actor; at: string; comment?: string }
/** A request as the API shows it. */
export type Request = {
  id: string
  environment: string
  title: string
  description: string
  state: string
  author: Actor
  changes: { flag: string; set: Record<string, unknown>; diff?: Record<string, { before: unknown; after: unknown }> }[]
  approvals: Review[]
  rejection?: Review
  scheduledAt: string | null
  createdAt: string
  failureReason?: string
}

const STATES = ['open', 'approved', 'scheduled', 'applied', 'rejected', 'cancelled', 'failed']
const shown = (v: unknown) => (v === undefined || v === null ? '–' : JSON.stringify(v))

/** One request, opened: its diff, reviews and actions. */
function RequestDetail({
  id,
  me,
  permissions,
  onChanged,
}: {
  id: string
  me: string
  permissions: readonly string[]
  onChanged: () => void
}) {
  const [request, setRequest] = useState<Request | null>(null)
  const [comment, setComment] = useState('')
  const { message, setMessage } = useOutcome()
  const load = async () => {
    const { data, error } = await api.GET('/api/change-requests/{id}', { params: { path: { id } } })
    if (data) setRequest(data as Request)
    else setMessage(refused(error))
  }
  useEffect(() => void load(), [id])
  if (!request) return <NoticeLine notice={message} />
  const pending = ['open', 'approved', 'scheduled'].includes(request.state)
  const author = request.author.id === me
  const approver = request.approvals.some((a) => a.by.id === me)
  const mayApprove = pending && !author && !approver && grants(permissions, 'flag:approve', request.environment)
  const act = async (action: 'approve' | 'reject' | 'apply' | 'cancel') => {
    const params = { path: { id } }
    const { data, error } =
      action === 'approve'
        ? await api.POST('/api/change-requests/{id}/approve', { params, body: comment ? { comment } : {} })
        : action === 'reject'
          ? await api.POST('/api/change-requests/{id}/reject', { params, body: { comment } })
          : action === 'apply'
            ? await api.POST('/api/change-requests/{id}/apply', { params })
            : await api.POST('/api/change-requests/{id}/cancel', { params })
    const did = { approve: 'approved', reject: 'rejected', apply: 'applied', cancel: 'cancelled' }[action]
    setMessage(data ? done(`${did}: the request is ${(data as Request).state} now`) : refused(error))
    setComment('')
    await load()
    onChanged()
  }
  return (
    <div class="request-detail">
      {request.description && <p>{request.description}</p>}
      <table class="differences">
        <caption>
          What it changes in {request.environment}
          {request.scheduledAt ? `, at ${request.scheduledAt}` : ''}
        </caption>
        <thead>
          <tr>
            <th scope="col">Flag</th>
            <th scope="col">Field</th>
            <th scope="col">Now</th>
            <th scope="col">After</th>
          </tr>
        </thead>
        <tbody>
          {request.changes.flatMap((c) =>
            Object.entries(c.diff ?? {}).map(([field, d], i) => (
              <tr key={`${c.flag} ${field}`}>
                <td>{i === 0 ? c.flag : ''}</td>
                <td>{field}</td>
                <td>
                  <code>{shown(d.before)}</code>
                </td>
                <td>
                  <code>{shown(d.after)}</code>
                </td>
              </tr>
            )),
          )}
        </tbody>
      </table>
      <ul class="reviews">
        {request.approvals.map((a) => (
          <li key={a.by.id}>
            approved by {a.by.name} {shortTime(a.at)}
            {a.comment ? `: ${a.comment}` : ''}
          </li>
        ))}
        {request.rejection && (
          <li>
            rejected by {request.rejection.by.name} {shortTime(request.rejection.at)}: {request.rejection.comment}
          </li>
        )}
        {request.failureReason && <li class="error">failed: {request.failureReason}</li>}
      </ul>
      {pending && (
        <div class="actions">
          {mayApprove && (
            <>
              <label for={`comment-${id}`}>Comment</label>
              <input id={`comment-${id}`} value={comment} onInput={(e) => setComment(e.currentTarget.value)} />
              <button type="button" onClick={() => act('approve')}>
                Approve
              </button>
              <button
                type="button"
                class="plain"
                onClick={() => act('reject')}
                disabled={comment.trim() === ''}
                title="say why in the comment"
              >
                Reject
              </button>
            </>
          )}
          {(author || approver) && (request.state === 'approved' || request.state === 'scheduled') && (
            <button type="button" onClick={() => act('apply')}>
              Apply
            </button>
          )}
          {author && (
            <button type="button" class="plain" onClick={() => act('cancel')}>
              Cancel
            </button>
          )}
        </div>
      )}
      <NoticeLine notice={message} />
    </div>
  )
}

export function ChangeRequestsPage({ me, permissions }: { me: string; permissions: readonly string[] }) {
  // every state at first: a request acted on stays in view as it moves on
  const [state, setState] = useState('')
  const [requests, setRequests] = useState<Request[] | null>(null)
  const [opened, setOpened] = useState<string | null>(null)
  const { message, setMessage } = useOutcome()
  const load = async () => {
    const { data, error } = await api.GET('/api/change-requests', { params: { query: state ? { state } : {} } })
    if (data) setRequests(data as Request[])
    else setMessage(refused(error))
  }
  useEffect(() => {
    void load()
    return listenForChanges((type) => type.startsWith('flag.') && void load())
  }, [state])
  return (
    <section class="page change-requests">
      <h1>Change requests</h1>
      <div class="field">
        <label for="cr-state">State</label>
        <select id="cr-state" value={state} onChange={(e) => setState(e.currentTarget.value)}>
          <option value="">any state</option>
          {STATES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <NoticeLine notice={message} />
      {requests !== null && requests.length === 0 && <p>No change requests{state ? ` ${state}` : ''}.</p>}
      <ul class="requests">
        {(requests ?? []).map((r) => (
          <li key={r.id} data-request={r.id}>
            <button type="button" class="plain" aria-expanded={opened === r.id} onClick={() => setOpened(opened === r.id ? null : r.id)}>
              {r.title}
            </button>{' '}
            <span class="chip">{r.state}</span>{' '}
            <span class="meta">
              {r.environment} · {r.changes.map((c) => c.flag).join(', ')} · by {r.author.name} {shortTime(r.createdAt)}
              {r.scheduledAt ? ` · at ${r.scheduledAt}` : ''} · {r.approvals.length} approval(s)
            </span>
            {opened === r.id && <RequestDetail id={r.id} me={me} permissions={permissions} onChanged={load} />}
          </li>
        ))}
      </ul>
    </section>
  )
}
