/**
 * Applying change requests (docs/change-control.md#change-requests): all or nothing, in one
 * transaction that re-reads the request (so a request is applied exactly once across replicas), by
 * the author or an approver, or by the schedule for the author.
 */

import type { ChangeRequest } from '../domain/change-request.ts'
import { AppError, ConflictError } from '../domain/errors.ts'
import { actorOf, type Caller } from '../domain/principal.ts'
import { requireMayApply } from '../domain/write-guard.ts'
import { applyInTransaction, failInTransaction } from './change-request-apply.ts'
import { authorProblem } from './change-request-authority.ts'
import { type ChangeRequestDeps, type ChangeRequestView, findRequest, isAuthor, viewOf } from './change-request-deps.ts'
import { commitMeta } from './commit-meta.ts'

/** What one transaction of applying did: the request as it stands, why it failed, or that another had applied it already. */
export interface ApplyOutcome {
  request: ChangeRequest
  failureReason?: string
  skipped: boolean
}

/** Applies request `id` in one transaction as `caller` through `source`; a scheduled one `late` seconds late. */
export type ApplyNow = (caller: Caller, id: string, source: 'api' | 'schedule', late?: number) => Promise<ApplyOutcome>

/** Marks request `id` failed for `reason` in one transaction, as the schedule for `caller`, unless it is no longer waiting to be applied. */
export type FailNow = (caller: Caller, id: string, reason: string, late?: number) => Promise<ApplyOutcome>

/** Creates the applying use cases: `applyNow` and `failNow` for the schedule, `apply` for a person. */
export function createChangeRequestApplier(deps: ChangeRequestDeps) {
  const { store, now } = deps
  const metaOf = (caller: Caller, id: string, source: 'api' | 'schedule', late: number | undefined) => {
    const env = store.committed().changeRequests.get(id)?.environment
    return { ...commitMeta(caller, source, env), changeRequest: id, ...(late !== undefined ? { lateSeconds: late } : {}) }
  }
  const failNow: FailNow = async (caller, id, reason, late) => {
    const { result } = await store.transact(metaOf(caller, id, 'schedule', late), (tx) => {
      const request = findRequest(tx.read, id)
      if (request.state !== 'approved' && request.state !== 'scheduled') return { request, skipped: true }
      return { ...failInTransaction(tx, request, now().toISOString(), reason), skipped: false }
    })
    return result as ApplyOutcome
  }
  const applyNow: ApplyNow = async (caller, id, source, late) => {
    const { result } = await store.transact(metaOf(caller, id, source, late), (tx) => {
      const request = findRequest(tx.read, id)
      // applied by another replica, or by another request, a moment ago: nothing to do
      if (request.state !== 'approved' && request.state !== 'scheduled') return { request, skipped: true }
      // the schedule acts for the author as the author stands now: one who may no longer fails it
      const problem = source === 'schedule' ? authorProblem(tx.read, request, caller.principal) : undefined
      if (problem !== undefined) return { ...failInTransaction(tx, request, now().toISOString(), problem), skipped: false }
      return { ...applyInTransaction(tx, request, now().toISOString()), skipped: false }
    })
    return result as ApplyOutcome
  }

  return {
    applyNow,
    failNow,

    async apply(caller: Caller, id: string): Promise<ChangeRequestView> {
      const request = findRequest(store.committed(), id)
      const by = actorOf(caller.principal)
      // the command line (whoever controls the data directory) may apply what others approved
      if (caller.principal.kind !== 'system' && !isAuthor(caller.principal, request) && !request.approvals.some((a) => a.by.id === by.id))
        throw new AppError('FORBIDDEN', 'only the author or an approver of a change request applies it')
      // with the rights the applier holds now: an author reduced to reading applies nothing
      requireMayApply(caller.principal, request)
      if (request.state !== 'approved' && request.state !== 'scheduled')
        throw new ConflictError(`change request ${id} is ${request.state}: only an approved or scheduled one is applied`, {
          state: request.state,
        })
      const outcome = await applyNow(caller, id, 'api')
      if (outcome.skipped && outcome.request.state !== 'applied')
        throw new ConflictError(`change request ${id} is ${outcome.request.state}`, { state: outcome.request.state })
      if (outcome.failureReason !== undefined)
        throw new ConflictError(`change request ${id} failed: ${outcome.failureReason}`, {
          state: 'failed',
          failureReason: outcome.failureReason,
        })
      return viewOf(outcome.request)
    },
  }
}
