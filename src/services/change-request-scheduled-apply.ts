/**
 * Scheduled change requests (docs/change-control.md#scheduled-changes): applied by the schedule at
 * `scheduledAt`, for the author as the author stands then, or at once when approved after their time.
 */

import type { ChangeRequest } from '../domain/change-request.ts'
import { AppError, UnavailableError } from '../domain/errors.ts'
import { newId } from '../domain/new-id.ts'
import type { Caller } from '../domain/principal.ts'
import type { ApplyNow, FailNow } from './change-request-applier.ts'
import { principalOfActor } from './change-request-authority.ts'
import { type ChangeRequestDeps, type ChangeRequestView, viewOf } from './change-request-deps.ts'

/** What the schedule did with one request. */
export interface ScheduledOutcome {
  request: ChangeRequestView
  lateSeconds?: number
  failureReason?: string
}

/**
 * How many due requests a round hands to the store at once. Their transactions are all begun
 * before any is awaited, so the store's group commit writes them together (a few commits, not one
 * each: docs/change-control.md#scheduled-changes); more wait for those to be durable, so what one
 * round holds in flight stays bounded.
 */
export const APPLIED_TOGETHER = 1000

/** Creates the schedule's use cases over `applyNow` and `failNow` (one transaction each). */
export function createScheduledApply(deps: ChangeRequestDeps & { applyNow: ApplyNow; failNow: FailNow }) {
  const { store, now, applyNow, failNow } = deps
  const scheduler = (r: ChangeRequest): Caller => ({
    principal: principalOfActor(store.committed(), r.author, now().getTime()),
    requestId: newId('sched'),
  })
  /** After a request becomes due while approved (scheduled in the past), it is applied at once. */
  const dueNow = (r: ChangeRequest) => r.state === 'scheduled' && r.scheduledAt !== null && Date.parse(r.scheduledAt) <= now().getTime()
  // recorded as the schedule's, by the author, as any scheduled apply is
  const settle = async (r: ChangeRequest) => (dueNow(r) ? viewOf((await applyNow(scheduler(r), r.id, 'schedule')).request) : viewOf(r))

  /** Applies one due request; a commit refused for this request alone (an AppError other than 503) fails it, on its own. */
  const applyOne = async (request: ChangeRequest): Promise<ScheduledOutcome | undefined> => {
    const lateMs = now().getTime() - Date.parse(request.scheduledAt as string)
    const late = lateMs >= 2000 ? Math.round(lateMs / 1000) : undefined
    const caller = scheduler(request)
    const outcome = await applyNow(caller, request.id, 'schedule', late).catch((err: unknown) => {
      // the store cannot write, or anything unexpected: it stays scheduled and the next round tries again
      if (!(err instanceof AppError) || err instanceof UnavailableError) throw err
      return failNow(caller, request.id, err.message, late)
    })
    if (outcome.skipped) return undefined
    return {
      request: viewOf(outcome.request),
      ...(late !== undefined ? { lateSeconds: late } : {}),
      ...(outcome.failureReason !== undefined ? { failureReason: outcome.failureReason } : {}),
    }
  }

  return {
    settle,

    async applyDue(): Promise<ScheduledOutcome[]> {
      const out: ScheduledOutcome[] = []
      const due = [...store.committed().changeRequests.values()].filter(dueNow)
      due.sort((a, b) => ((a.scheduledAt as string) < (b.scheduledAt as string) ? -1 : 1))
      for (let from = 0; from < due.length; from += APPLIED_TOGETHER) {
        const settled = await Promise.allSettled(due.slice(from, from + APPLIED_TOGETHER).map(applyOne))
        for (const s of settled) if (s.status === 'fulfilled' && s.value !== undefined) out.push(s.value)
        const broken = settled.find((s) => s.status === 'rejected')
        if (broken !== undefined) throw (broken as PromiseRejectedResult).reason
      }
      return out
    },
  }
}
