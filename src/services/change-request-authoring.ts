/**
 * Authoring change requests (docs/change-control.md#change-requests): made and edited by their
 * author (which clears the approvals), each change checked against the newest state when made, and
 * cancelled by the author.
 */

import { canSeeFlag, requirePermission, requirePermissionSomewhere } from '../domain/access-policy.ts'
import { type ChangeRequest, reachesEveryEnvironment, SHARED_REQUESTABLE_FIELDS } from '../domain/change-request.ts'
import { AppError, ChangeRequestRequiredError, type FieldProblem, InvalidError, ValidationFailedError } from '../domain/errors.ts'
import { servedRevisionOf } from '../domain/flag-row.ts'
import { newId } from '../domain/new-id.ts'
import { setOwn } from '../domain/own-property.ts'
import { actorOf, type Caller, type Principal } from '../domain/principal.ts'
import type { Snapshot } from '../storage/store.ts'
import {
  type ChangeRequestDeps,
  type ChangeRequestView,
  findRequest,
  isAuthor,
  requirePending,
  type SettleRequest,
  stateWith,
  viewOf,
} from './change-request-deps.ts'
import { parseRequestInput, type RequestInput } from './change-request-input.ts'
import { commitMeta } from './commit-meta.ts'
import { requireIn } from './environment-access.ts'
import { withEnvironmentFields } from './environment-state-write.ts'
import { archiveRefusal } from './flag-archive.ts'

/**
 * Shared fields and deletions change every environment: a request of an unprotected environment
 * may not carry them while another is protected; it is made there (docs/change-control.md#change-requests).
 */
function reachesProtected(snapshot: Snapshot, env: string, body: RequestInput): void {
  const reaching = body.changes.find(reachesEveryEnvironment)
  if (reaching === undefined || snapshot.environments.get(env)?.protected === true) return
  // named: the protected environment asking for the most approvals, where the web UI makes such requests
  let guarded: { name: string; requiredApprovals: number } | undefined
  for (const e of snapshot.environments.values())
    if (e.protected && (guarded === undefined || e.requiredApprovals > guarded.requiredApprovals)) guarded = e
  if (guarded === undefined) return
  const what = reaching.delete
    ? `deletes ${reaching.flag}`
    : reaching.archive
      ? `archives ${reaching.flag}`
      : `changes ${reaching.flag}'s ${SHARED_REQUESTABLE_FIELDS.filter((f) => Object.hasOwn(reaching.set, f)).join(', ')}, shared by every environment`
  throw new ChangeRequestRequiredError(
    guarded.name,
    `this request ${what}, so it reaches every environment, and ${guarded.name} is protected: make it in ${guarded.name} ("environment": "${guarded.name}"), whose approvals apply it everywhere`,
  )
}

/** Creates the author's use cases; `settle` applies at once a request that is approved and already due. */
export function createChangeRequestAuthoring(deps: ChangeRequestDeps & { settle: SettleRequest }) {
  const { store, now, settle } = deps
  /** Checks each change against the newest state; the base revisions (and flag ids) they are made on. */
  const checked = (snapshot: Snapshot, principal: Principal, env: string, body: RequestInput) => {
    const problems: FieldProblem[] = []
    const baseRevisions: Record<string, number> = {}
    const baseFlagIds: Record<string, string> = {}
    const at = now().toISOString()
    for (const [i, change] of body.changes.entries()) {
      const current = canSeeFlag(principal, change.flag) ? snapshot.flags.get(change.flag) : undefined
      if (current === undefined) {
        problems.push({ field: `changes[${i}].flag`, reason: `no flag named ${JSON.stringify(change.flag)}` })
        continue
      }
      setOwn(baseRevisions, change.flag, servedRevisionOf(current, env))
      setOwn(baseFlagIds, change.flag, current.id)
      if (change.delete === true) continue
      if (change.archive === true) {
        const refused = archiveRefusal(snapshot, current, (n) => canSeeFlag(principal, n))
        if (refused !== undefined) problems.push({ field: `changes[${i}].archive`, reason: refused })
        continue
      }
      const made = withEnvironmentFields(snapshot, current, env, change.set, at, `changes[${i}].set.`)
      if ('problems' in made) problems.push(...made.problems)
    }
    if (problems.length > 0) throw new ValidationFailedError(problems)
    return { baseRevisions, baseFlagIds }
  }

  return {
    async create(caller: Caller, input: unknown): Promise<ChangeRequestView> {
      requirePermissionSomewhere(caller.principal, 'flag:write')
      const body = parseRequestInput(input, true)
      const env = body.environment as string
      if (!store.committed().environments.has(env))
        throw new InvalidError(`no environment named ${JSON.stringify(env)}`, 'environment', 'unknown environment')
      requireIn(caller.principal, 'flag:write', env)
      // shared fields and deletions change every environment: the unscoped permission, as a PUT or DELETE needs
      if (body.changes.some(reachesEveryEnvironment)) requirePermission(caller.principal, 'flag:write')
      const { result } = await store.transact(commitMeta(caller), (tx) => {
        reachesProtected(tx.read, env, body)
        const { baseRevisions, baseFlagIds } = checked(tx.read, caller.principal, env, body)
        const at = now().toISOString()
        const request: ChangeRequest = {
          id: newId('cr'),
          environment: env,
          title: body.title,
          description: body.description,
          state: stateWith(tx.read, { environment: env, scheduledAt: body.scheduledAt, changes: body.changes }, 0),
          author: actorOf(caller.principal),
          changes: body.changes,
          baseRevisions,
          baseFlagIds,
          approvals: [],
          scheduledAt: body.scheduledAt,
          createdAt: at,
          updatedAt: at,
          revision: 1,
        }
        tx.put('changeRequests', request)
        return request
      })
      return settle(result)
    },

    async edit(caller: Caller, id: string, input: unknown): Promise<ChangeRequestView> {
      const body = parseRequestInput(input, false)
      if (body.changes.some(reachesEveryEnvironment)) requirePermission(caller.principal, 'flag:write')
      const { result } = await store.transact(commitMeta(caller), (tx) => {
        const request = findRequest(tx.read, id)
        if (!isAuthor(caller.principal, request)) throw new AppError('FORBIDDEN', 'only the author edits a change request')
        // an edit proposes anew: the author needs now what making it needs (docs/change-control.md#change-requests)
        requireIn(caller.principal, 'flag:write', request.environment)
        requirePending(request, 'edited')
        reachesProtected(tx.read, request.environment, body)
        const { baseRevisions, baseFlagIds } = checked(tx.read, caller.principal, request.environment, body)
        const next: ChangeRequest = {
          ...request,
          title: body.title,
          description: body.description,
          changes: body.changes,
          scheduledAt: body.scheduledAt,
          baseRevisions,
          baseFlagIds,
          approvals: [],
          state: stateWith(tx.read, { environment: request.environment, scheduledAt: body.scheduledAt, changes: body.changes }, 0),
          updatedAt: now().toISOString(),
          revision: request.revision + 1,
        }
        tx.put('changeRequests', next)
        return next
      })
      return settle(result)
    },

    async cancel(caller: Caller, id: string): Promise<ChangeRequestView> {
      const { result } = await store.transact(commitMeta(caller), (tx) => {
        const request = findRequest(tx.read, id)
        if (!isAuthor(caller.principal, request)) throw new AppError('FORBIDDEN', 'only the author cancels a change request')
        requirePending(request, 'cancelled')
        const next: ChangeRequest = { ...request, state: 'cancelled', updatedAt: now().toISOString(), revision: request.revision + 1 }
        tx.put('changeRequests', next)
        return next
      })
      return viewOf(result)
    },
  }
}
