/**
 * Change requests (docs/change-control.md#change-requests): proposed changes of one environment's
 * flag states, checked when made, reviewed by others (`flag:approve` there; never the author, never
 * twice by one person), edited by their author (which clears the approvals), cancelled, rejected,
 * and applied all or nothing: by the author or an approver, or by the schedule at `scheduledAt`
 * (exactly once across replicas: applying re-reads the request in its transaction).
 */

import type { Clock } from '../domain/clock.ts'
import type { Caller, Principal } from '../domain/principal.ts'
import type { Store } from '../storage/store.ts'
import { createChangeRequestApplier } from './change-request-applier.ts'
import { createChangeRequestAuthoring } from './change-request-authoring.ts'
import type { ChangeRequestView } from './change-request-deps.ts'
import { type ChangeRequestFilter, createChangeRequestReads } from './change-request-reads.ts'
import { createChangeRequestReview } from './change-request-review.ts'
import { createScheduledApply, type ScheduledOutcome } from './change-request-scheduled-apply.ts'

/** The change-request use cases. */
export interface ChangeRequestService {
  create(caller: Caller, input: unknown): Promise<ChangeRequestView>
  edit(caller: Caller, id: string, input: unknown): Promise<ChangeRequestView>
  list(principal: Principal, filter: ChangeRequestFilter): ChangeRequestView[]
  get(principal: Principal, id: string): ChangeRequestView
  approve(caller: Caller, id: string, input: unknown): Promise<ChangeRequestView>
  reject(caller: Caller, id: string, input: unknown): Promise<ChangeRequestView>
  cancel(caller: Caller, id: string): Promise<ChangeRequestView>
  /** Applies now (`409` unless approved or scheduled; `409` and `failed` when it cannot be applied). */
  apply(caller: Caller, id: string): Promise<ChangeRequestView>
  /** Applies every scheduled request whose time has come; answers what happened to each. */
  applyDue(): Promise<ScheduledOutcome[]>
}

/** Creates the service; `now` is the clock of stamps and of the schedule. */
export function createChangeRequestService(store: Store, now: Clock): ChangeRequestService {
  const applier = createChangeRequestApplier({ store, now })
  const scheduled = createScheduledApply({ store, now, applyNow: applier.applyNow, failNow: applier.failNow })
  const authoring = createChangeRequestAuthoring({ store, now, settle: scheduled.settle })
  const review = createChangeRequestReview({ store, now, settle: scheduled.settle })
  const reads = createChangeRequestReads({ store })
  return {
    create: authoring.create,
    edit: authoring.edit,
    list: reads.list,
    get: reads.get,
    approve: review.approve,
    reject: review.reject,
    cancel: authoring.cancel,
    apply: applier.apply,
    applyDue: scheduled.applyDue,
  }
}
