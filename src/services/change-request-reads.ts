/**
 * Reading change requests (docs/change-control.md#change-requests): a principal sees those of the
 * environments it may read whose every flag is in its scope; a single read adds each change's diff
 * against what the environment serves now.
 */

import { canSeeFlag, requirePermissionSomewhere } from '../domain/access-policy.ts'
import { CHANGE_REQUEST_STATES, type ChangeRequest } from '../domain/change-request.ts'
import { InvalidError, NotFoundError } from '../domain/errors.ts'
import type { Principal } from '../domain/principal.ts'
import type { Rollout } from '../domain/rollout.ts'
import { writtenRollout } from '../domain/rollout-status.ts'
import { type ChangeRequestDeps, type ChangeRequestView, findRequest, viewOf } from './change-request-deps.ts'
import { canIn } from './environment-access.ts'
import { flagView } from './environment-views.ts'

/** The filters of a list (absent: every state and environment). */
export interface ChangeRequestFilter {
  state?: string | undefined
  environment?: string | undefined
  flag?: string | undefined
}

/** Creates the reading use cases. */
export function createChangeRequestReads(deps: Pick<ChangeRequestDeps, 'store'>) {
  const { store } = deps
  /** A request `principal` may see: flag:read in its environment, and every flag it changes in scope. */
  const visible = (principal: Principal, r: ChangeRequest) =>
    canIn(principal, 'flag:read', r.environment) && r.changes.every((c) => canSeeFlag(principal, c.flag))

  return {
    list(principal: Principal, filter: ChangeRequestFilter): ChangeRequestView[] {
      requirePermissionSomewhere(principal, 'flag:read')
      const snapshot = store.committed()
      const { state, environment, flag } = filter
      if (state !== undefined && !(CHANGE_REQUEST_STATES as readonly string[]).includes(state))
        throw new InvalidError(`state must be one of ${CHANGE_REQUEST_STATES.join(', ')}`, 'state', 'unknown state')
      if (environment !== undefined && !snapshot.environments.has(environment))
        throw new NotFoundError(`no environment named ${JSON.stringify(environment)}`)
      return [...snapshot.changeRequests.values()]
        .filter(
          (r) =>
            (state === undefined || r.state === state) &&
            (environment === undefined || r.environment === environment) &&
            (flag === undefined || r.changes.some((c) => c.flag === flag)) &&
            visible(principal, r),
        )
        .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id < b.id ? 1 : -1))
        .map(viewOf)
    },

    get(principal: Principal, id: string): ChangeRequestView {
      requirePermissionSomewhere(principal, 'flag:read')
      const snapshot = store.committed()
      const request = findRequest(snapshot, id)
      if (!visible(principal, request)) throw new NotFoundError(`no change request with id ${JSON.stringify(id)}`)
      const shown = viewOf(request)
      // each change's difference from what the environment serves now
      shown.changes = request.changes.map((c) => {
        const row = snapshot.flags.get(c.flag)
        const current = row && (flagView(row, request.environment) as unknown as Record<string, unknown>)
        const diff: Record<string, { before: unknown; after: unknown }> = {}
        if (c.delete === true) diff.exists = { before: row !== undefined, after: false }
        if (c.archive === true) diff.archived = { before: row?.archived === true, after: true }
        for (const [field, after] of Object.entries(c.set)) {
          const stored = current?.[field] ?? null
          // a rollout as written: what the server keeps on it is no part of a change (docs/guarded-rollouts.md#status-and-percent)
          const before = field === 'rollout' && stored !== null ? writtenRollout(stored as Rollout) : stored
          if (JSON.stringify(before) !== JSON.stringify(after)) diff[field] = { before, after }
        }
        return { ...c, diff }
      })
      return shown
    },
  }
}
