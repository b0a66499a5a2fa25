/**
 * What the signed-in person may do with a request (docs/ui.md#change-requests): `Approve` and
 * `Reject` with a comment (with `flag:approve` in its environment, never their own), `Approve &
 * apply` when their approval is the last one needed, `Apply` (its author or an approver, once
 * approved) and `Cancel` (its author).
 */

import { useState } from 'preact/hooks'
import { grants } from '../../domain/permission.ts'
import { api, messageOf } from './api.ts'
import { approvalCompletes, isPending, type Request, type Viewer } from './change-request-model.ts'
import { done, type Notice, refused } from './notice.tsx'

type Action = 'approve' | 'reject' | 'apply' | 'cancel'
const DID: Record<Action, string> = { approve: 'approved', reject: 'rejected', apply: 'applied', cancel: 'cancelled' }

/** Sends `action` on request `id`: the request as it is after, or the service's refusal. */
async function send(id: string, action: Action, comment: string): Promise<{ request: Request } | { error: unknown }> {
  const params = { path: { id } }
  const { data, error } =
    action === 'approve'
      ? await api.POST('/api/change-requests/{id}/approve', { params, body: comment ? { comment } : {} })
      : action === 'reject'
        ? await api.POST('/api/change-requests/{id}/reject', { params, body: { comment } })
        : action === 'apply'
          ? await api.POST('/api/change-requests/{id}/apply', { params })
          : await api.POST('/api/change-requests/{id}/cancel', { params })
  return data ? { request: data as Request } : { error }
}

/** The buttons `viewer` may use on `request`; `onDone` reports the outcome and reloads. */
export function RequestActions({
  request,
  viewer,
  required,
  onDone,
}: {
  request: Request
  viewer: Viewer
  required: number
  onDone: (notice: Notice) => void
}) {
  const [comment, setComment] = useState('')
  const [busy, setBusy] = useState(false)
  if (!isPending(request)) return null
  const author = request.author.id === viewer.id
  const approver = request.approvals.some((a) => a.by.id === viewer.id)
  // an approved or scheduled request may take more approvals too
  const mayApprove = !author && !approver && grants(viewer.permissions, 'flag:approve', request.environment)
  const completes = approvalCompletes(request, viewer, required)
  const run = async (work: () => Promise<Notice>) => {
    setBusy(true)
    const notice = await work()
    setBusy(false)
    setComment('')
    onDone(notice)
  }
  const act = (action: Action) =>
    run(async () => {
      const result = await send(request.id, action, comment)
      return 'error' in result ? refused(result.error) : done(`${DID[action]}: the request is ${result.request.state} now`)
    })
  // one click: approve, then apply; an apply that fails leaves the approval standing and says why
  const approveAndApply = () =>
    run(async () => {
      const approved = await send(request.id, 'approve', comment)
      if ('error' in approved) return refused(approved.error)
      if (approved.request.state === 'applied') return done('approved and applied: the request is applied now')
      const applied = await send(request.id, 'apply', '')
      if ('error' in applied) return { text: `approved, but not applied: ${messageOf(applied.error)}`, bad: true }
      return done(`approved and applied: the request is ${applied.request.state} now`)
    })
  return (
    <div class="actions request-actions">
      {mayApprove && (
        <>
          <label for={`comment-${request.id}`}>Comment</label>
          <input id={`comment-${request.id}`} value={comment} onInput={(e) => setComment(e.currentTarget.value)} />
          {completes && (
            <button type="button" disabled={busy} onClick={approveAndApply}>
              Approve & apply
            </button>
          )}
          <button type="button" class={completes ? 'plain' : undefined} disabled={busy} onClick={() => act('approve')}>
            Approve
          </button>
          <button
            type="button"
            class="plain"
            onClick={() => act('reject')}
            disabled={busy || comment.trim() === ''}
            title="say why in the comment"
          >
            Reject
          </button>
        </>
      )}
      {(author || approver) && (request.state === 'approved' || request.state === 'scheduled') && (
        <button type="button" disabled={busy} onClick={() => act('apply')}>
          Apply
        </button>
      )}
      {author && (
        <button type="button" class="plain" disabled={busy} onClick={() => act('cancel')}>
          Cancel
        </button>
      )}
    </div>
  )
}
