/**
 * What the parts of the change-request use cases share (docs/change-control.md#change-requests):
 * the store and clock, finding a request, its view, and the rules of its state.
 */

import { type ChangeRequest, type ChangeRequestState, PENDING_STATES, reachesEveryEnvironment } from '../domain/change-request.ts'
import type { Clock } from '../domain/clock.ts'
import { ConflictError, NotFoundError } from '../domain/errors.ts'
import { actorOf, type Principal } from '../domain/principal.ts'
import type { Snapshot, Store } from '../storage/store.ts'

/** The store the requests live in and the clock of stamps and of the schedule. */
export interface ChangeRequestDeps {
  store: Store
  now: Clock
}

/** A request as the API shows it; a single read adds each change's diff against the current state. */
export type ChangeRequestView = Omit<ChangeRequest, 'revision' | 'changes' | 'baseFlagIds'> & {
  changes: {
    flag: string
    set: Record<string, unknown>
    delete?: true
    archive?: true
    diff?: Record<string, { before: unknown; after: unknown }>
  }[]
}

/** Applies at once a request that has become due (approved after its time), else only views it. */
export type SettleRequest = (r: ChangeRequest) => Promise<ChangeRequestView>

/** A request as the API shows it, without its internal revision and flag ids. */
export const viewOf = ({ revision: _r, baseFlagIds: _ids, ...request }: ChangeRequest): ChangeRequestView => request

/** The request `id` in `snapshot` (`404` when there is none). */
export const findRequest = (snapshot: Snapshot, id: string): ChangeRequest => {
  const request = snapshot.changeRequests.get(id)
  if (request === undefined) throw new NotFoundError(`no change request with id ${JSON.stringify(id)}`)
  return request
}

/**
 * How many approvals request `r` needs now: its environment's, and for a shared change or a deletion,
 * which reaches every environment, those of the strictest protected environment too
 * (docs/change-control.md#approvals).
 */
export const approvalsNeeded = (
  snapshot: Snapshot,
  r: Pick<ChangeRequest, 'environment'> & { changes?: ChangeRequest['changes'] },
): number => {
  let needed = snapshot.environments.get(r.environment)?.requiredApprovals ?? 0
  if (r.changes?.some(reachesEveryEnvironment) === true)
    for (const env of snapshot.environments.values()) if (env.protected) needed = Math.max(needed, env.requiredApprovals)
  return needed
}

/** The state a request reaches with `approvals`, at its time. */
export const stateWith = (
  snapshot: Snapshot,
  r: Pick<ChangeRequest, 'environment' | 'scheduledAt'> & { changes?: ChangeRequest['changes'] },
  approvals: number,
): ChangeRequestState => {
  if (approvals < approvalsNeeded(snapshot, r)) return 'open'
  return r.scheduledAt !== null ? 'scheduled' : 'approved'
}

/** Refuses (`409`) to act on a request that is no longer pending; `what` says what it can no longer be. */
export const requirePending = (r: ChangeRequest, what: string) => {
  if (!PENDING_STATES.has(r.state))
    throw new ConflictError(`change request ${r.id} is ${r.state}; it can no longer be ${what}`, { state: r.state })
}

/** Whether `p` is the request's author (the very same user or token). */
export const isAuthor = (p: Principal, r: ChangeRequest) => actorOf(p).id === r.author.id
