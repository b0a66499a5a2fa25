/**
 * A change request's own page, `/ui/change-requests/<id>` (docs/ui.md#change-requests): its changes
 * in words (the JSON behind `Show JSON`), its diff against what its environment serves now, its
 * approvals and comments, and the buttons the signed-in person may use.
 */

import { useEffect, useState } from 'preact/hooks'
import { api } from './api.ts'
import { fieldInWords } from './audit-diff.ts'
import { RequestActions } from './change-request-actions.tsx'
import type { Request, Viewer } from './change-request-model.ts'
import { changesAsJson, changesInWords, diffCaption } from './change-request-words.ts'
import { useEnvironments } from './environment-choice.ts'
import { EnvironmentSwatch } from './environment-colour.tsx'
import { listenForChanges } from './live.ts'
import { localTime } from './local-time.ts'
import { NoticeLine, refused, useOutcome } from './notice.tsx'
import { link } from './router.ts'

/** The page of request `id`, as `viewer` may see and act on it. */
export function ChangeRequestPage({ id, viewer }: { id: string; viewer: Viewer }) {
  const [request, setRequest] = useState<Request | null>(null)
  const { message, setMessage } = useOutcome()
  const environments = useEnvironments()
  const load = async () => {
    const { data, error } = await api.GET('/api/change-requests/{id}', { params: { path: { id } } })
    if (data) setRequest(data as Request)
    else setMessage(refused(error))
  }
  useEffect(() => {
    void load()
    // the diff is against what the environment serves now: it moves when a flag does
    return listenForChanges((type) => type.startsWith('flag.') && void load())
  }, [id])
  const back = (
    <p class="back">
      <a {...link('change-requests')}>← All change requests</a>
    </p>
  )
  if (!request)
    return (
      <section class="page change-request">
        {back}
        <NoticeLine notice={message} />
      </section>
    )
  const required = environments.list.find((e) => e.name === request.environment)?.requiredApprovals ?? 0
  return (
    <section class="page change-request" data-request={request.id}>
      {back}
      <h1>{request.title}</h1>
      <p class="request-meta">
        <span class={`chip state-${request.state}`}>{request.state}</span> in{' '}
        <span class="env-badge">
          <EnvironmentSwatch name={request.environment} /> {request.environment}
        </span>{' '}
        · by {request.author.name} {localTime(request.createdAt)} · {request.approvals.length} of {required} approvals
        {request.scheduledAt ? ` · scheduled for ${localTime(request.scheduledAt)}` : ''}
      </p>
      {request.description && <p>{request.description}</p>}
      {request.failureReason && <p class="error">Failed: {request.failureReason}</p>}
      <ChangesInWords request={request} />
      <DiffTable request={request} />
      <Reviews request={request} />
      <RequestActions
        request={request}
        viewer={viewer}
        required={required}
        onDone={(notice) => {
          setMessage(notice)
          void load()
        }}
      />
      <NoticeLine notice={message} />
    </section>
  )
}

/** The request's changes, one flag a line, in words; its JSON behind a toggle. */
function ChangesInWords({ request }: { request: Request }) {
  const [json, setJson] = useState(false)
  return (
    <section class="card" aria-labelledby="request-changes-title">
      <h2 id="request-changes-title">Changes</h2>
      <ul class="request-changes">
        {changesInWords(request).map((line) => (
          <li key={line.flag}>
            <a {...link(`flags/${line.flag}`)}>{line.flag}</a>: {line.words}
            {line.everywhere && <span class="meta"> (every environment)</span>}
          </li>
        ))}
      </ul>
      <button type="button" class="plain" aria-expanded={json} aria-controls="request-json" onClick={() => setJson(!json)}>
        Show JSON
      </button>
      {json && (
        <pre id="request-json" class="request-json">
          {changesAsJson(request)}
        </pre>
      )}
    </section>
  )
}

/** Each change's difference from what the environment serves now, field by field. */
function DiffTable({ request }: { request: Request }) {
  const rows = request.changes.flatMap((c) =>
    Object.entries(c.diff ?? {}).map(([field, d], i) => ({ flag: c.flag, first: i === 0, field, d })),
  )
  const caption = diffCaption(request, rows.length === 0)
  if (rows.length === 0) return <p class="meta">{caption}</p>
  return (
    <div class="table-scroll">
      <table class="differences">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Flag</th>
            <th scope="col">Field</th>
            <th scope="col">Now</th>
            <th scope="col">After</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={`${r.flag} ${r.field}`}>
              <td>{r.first ? r.flag : ''}</td>
              <td>{r.field}</td>
              <td>
                <code>{r.d.before === undefined || r.d.before === null ? '–' : fieldInWords(r.field, r.d.before)}</code>
              </td>
              <td>
                <code>{r.d.after === undefined || r.d.after === null ? '–' : fieldInWords(r.field, r.d.after)}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/** Approvals with their comments, the rejection with its reason. */
function Reviews({ request }: { request: Request }) {
  return (
    <section class="card" aria-labelledby="request-reviews-title">
      <h2 id="request-reviews-title">Approvals and comments</h2>
      {request.approvals.length === 0 && !request.rejection && <p class="meta">No approvals yet.</p>}
      <ul class="reviews">
        {request.approvals.map((a) => (
          <li key={a.by.id}>
            approved by {a.by.name} {localTime(a.at)}
            {a.comment ? `: ${a.comment}` : ''}
          </li>
        ))}
        {request.rejection && (
          <li>
            rejected by {request.rejection.by.name} {localTime(request.rejection.at)}: {request.rejection.comment}
          </li>
        )}
      </ul>
    </section>
  )
}
