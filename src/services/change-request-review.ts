/**
 * Reviewing change requests (docs/change-control.md#change-requests): approved by others holding
 * `flag:approve` in the request's environment (never the author, never twice by one person), or
 * rejected with a comment.
 */

import { canSeeFlag } from '../domain/access-policy.ts'
import type { ChangeRequest } from '../domain/change-request.ts'
import { AppError, ConflictError, NotFoundError } from '../domain/errors.ts'
import type { Principal } from '../domain/principal.ts'
import { actorOf, type Caller } from '../domain/principal.ts'
import { actsForAuthor, approvedBySamePerson } from './change-request-authority.ts'
import {
  type ChangeRequestDeps,
  type ChangeRequestView,
  findRequest,
  requirePending,
  type SettleRequest,
  stateWith,
  viewOf,
} from './change-request-deps.ts'
import { parseComment } from './change-request-input.ts'
import { commitMeta } from './commit-meta.ts'
import { requireIn } from './environment-access.ts'

/**
 * Request `id`, as a reviewer may see it: a confined reviewer reviews only requests whose every flag
 * is in its scope, and others are not found, as when reading them (docs/change-control.md#approvals).
 */
function reviewable(snapshot: Parameters<typeof findRequest>[0], p: Principal, id: string): ChangeRequest {
  const request = findRequest(snapshot, id)
  if (!request.changes.every((c) => canSeeFlag(p, c.flag))) throw new NotFoundError(`no change request with id ${JSON.stringify(id)}`)
  return request
}

/** Creates the reviewer's use cases; `settle` applies at once a request an approval makes due. */
export function createChangeRequestReview(deps: ChangeRequestDeps & { settle: SettleRequest }) {
  const { store, now, settle } = deps
  return {
    async approve(caller: Caller, id: string, input: unknown): Promise<ChangeRequestView> {
      const comment = parseComment(input, false)
      const { result } = await store.transact(commitMeta(caller), (tx) => {
        const request = reviewable(tx.read, caller.principal, id)
        requireIn(caller.principal, 'flag:approve', request.environment)
        if (actsForAuthor(tx.read, caller.principal, request))
          throw new AppError('FORBIDDEN', 'the author cannot approve their own change request (nor can a token of the same person)')
        requirePending(request, 'approved')
        const by = actorOf(caller.principal)
        // one person, one approval: their session and each of their tokens are the same voice
        if (approvedBySamePerson(tx.read, caller.principal, request))
          throw new ConflictError(`${by.name} approved this change request already (as themselves or through a token of theirs)`)
        const approvals = [...request.approvals, { by, at: now().toISOString(), ...(comment !== undefined ? { comment } : {}) }]
        const next: ChangeRequest = {
          ...request,
          approvals,
          state: stateWith(tx.read, request, approvals.length),
          updatedAt: now().toISOString(),
          revision: request.revision + 1,
        }
        tx.put('changeRequests', next)
        return next
      })
      return settle(result)
    },

    async reject(caller: Caller, id: string, input: unknown): Promise<ChangeRequestView> {
      const comment = parseComment(input, true) as string
      const { result } = await store.transact(commitMeta(caller), (tx) => {
        const request = reviewable(tx.read, caller.principal, id)
        requireIn(caller.principal, 'flag:approve', request.environment)
        if (actsForAuthor(tx.read, caller.principal, request))
          throw new AppError('FORBIDDEN', 'the author does not reject their own change request: cancel it (POST …/cancel)')
        requirePending(request, 'rejected')
        const at = now().toISOString()
        const next: ChangeRequest = {
          ...request,
          state: 'rejected',
          rejection: { by: actorOf(caller.principal), at, comment },
          updatedAt: at,
          revision: request.revision + 1,
        }
        tx.put('changeRequests', next)
        return next
      })
      return viewOf(result)
    },
  }
}
