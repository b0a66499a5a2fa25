/**
 * Scheduled change requests (docs/change-control.md#scheduled-changes): applied by the schedule at
 * `scheduledAt`, for the author as the author stands then, or at once when approved after their time.
 */

import type { ChangeRequest } from '../domain/change-request.ts'
import { newId } from '../domain/new-id.ts'
import type { Caller } from '../domain/principal.ts'
import type { ApplyNow } from './change-request-applier.ts'
import { principalOfActor } from './change-request-authority.ts'
import { type ChangeRequestDeps, type ChangeRequestView, viewOf } from './change-request-deps.ts'

/** What the schedule did with one request. */
export interface ScheduledOutcome {
  request: ChangeRequestView
  lateSeconds?: number
  failureReason?: string
}

/** Creates the schedule's use cases over `applyNow` (one transaction of applying a request). */
export function createScheduledApply(deps: ChangeRequestDeps & { applyNow: ApplyNow }) {
  const { store, now, applyNow } = deps
  const scheduler = (r: ChangeRequest): Caller => ({
    principal: principalOfActor(store.committed(), r.author, now().getTime()),
    requestId: newId('sched'),
  })
  /** After a request becomes due while approved (scheduled in the past), it is applied at once. */
  const dueNow = (r: ChangeRequest) => r.state === 'scheduled' && r.scheduledAt !== null && Date.parse(r.scheduledAt) <= now().getTime()
  // recorded as the schedule's, by the author, as any scheduled apply is
  const settle = async (r: ChangeRequest) => (dueNow(r) ? viewOf((await applyNow(scheduler(r), r.id, 'schedule')).request) : viewOf(r))

  return {
    settle,

    async applyDue(): Promise<ScheduledOutcome[]> {
      const out: ScheduledOutcome[] = []
      const due = [...store.committed().changeRequests.values()].filter(dueNow)
      for (const request of due.sort((a, b) => ((a.scheduledAt as string) < (b.scheduledAt as string) ? -1 : 1))) {
        const lateMs = now().getTime() - Date.parse(request.scheduledAt as string)
        const late = lateMs >= 2000 ? Math.round(lateMs / 1000) : undefined
        const outcome = await applyNow(scheduler(request), request.id, 'schedule', late)
        if (outcome.skipped) continue
        out.push({
          request: viewOf(outcome.request),
          ...(late !== undefined ? { lateSeconds: late } : {}),
          ...(outcome.failureReason !== undefined ? { failureReason: outcome.failureReason } : {}),
        })
      }
      return out
    },
  }
}
