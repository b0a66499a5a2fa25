/**
 * Change requests (docs/change-control.md#change-requests): proposed changes of one environment's
 * flag states, checked when made, reviewed by others (`flag:approve` there; never the author, never
 * twice by one person), edited by their author (which clears the approvals), cancelled, rejected,
 * and applied all or nothing: by the author or an approver, or by the schedule at `scheduledAt`
 * (exactly once across replicas: applying re-reads the request in its transaction).
 */

import { canSeeFlag, requirePermission, requirePermissionSomewhere } from '../domain/access-policy.ts'
import {
  CHANGE_REQUEST_STATES,
  type ChangeRequest,
  type ChangeRequestState,
  PENDING_STATES,
  reachesEveryEnvironment,
} from '../domain/change-request.ts'
import type { Clock } from '../domain/clock.ts'
import {
  AppError,
  ChangeRequestRequiredError,
  ConflictError,
  type FieldProblem,
  InvalidError,
  NotFoundError,
  ValidationFailedError,
} from '../domain/errors.ts'
import { servedRevisionOf } from '../domain/flag-row.ts'
import { newId } from '../domain/new-id.ts'
import { setOwn } from '../domain/own-property.ts'
import { actorOf, type Caller, type Principal } from '../domain/principal.ts'
import { requireMayApply } from '../domain/write-guard.ts'
import type { Snapshot, Store } from '../storage/store.ts'
import { applyInTransaction, failInTransaction } from './change-request-apply.ts'
import { actsForAuthor, approvedBySamePerson, authorProblem, principalOfActor } from './change-request-authority.ts'
import { parseComment, parseRequestInput, type RequestInput } from './change-request-input.ts'
import { commitMeta } from './commit-meta.ts'
import { canIn, requireIn } from './environment-access.ts'
import { withEnvironmentFields } from './environment-state-write.ts'
import { flagView } from './environment-views.ts'

/** A request as the API shows it; a single read adds each change's diff against the current state. */
export type ChangeRequestView = Omit<ChangeRequest, 'revision' | 'changes'> & {
  changes: { flag: string; set: Record<string, unknown>; delete?: true; diff?: Record<string, { before: unknown; after: unknown }> }[]
}

/** The filters of a list (absent: every state and environment). */
export interface ChangeRequestFilter {
  state?: string | undefined
  environment?: string | undefined
  flag?: string | undefined
}

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

/** What the schedule did with one request. */
export interface ScheduledOutcome {
  request: ChangeRequestView
  lateSeconds?: number
  failureReason?: string
}

/**
 * Shared fields and deletions change every environment: a request of an unprotected environment
 * may not carry them while another is protected; it is made there (docs/change-control.md#change-requests).
 */
function reachesProtected(snapshot: Snapshot, env: string, body: RequestInput): void {
  if (!body.changes.some(reachesEveryEnvironment) || snapshot.environments.get(env)?.protected === true) return
  const guarded = [...snapshot.environments.values()].find((e) => e.protected)
  if (guarded !== undefined) throw new ChangeRequestRequiredError(guarded.name)
}

const view = ({ revision: _r, ...request }: ChangeRequest): ChangeRequestView => request

/** Creates the service; `now` is the clock of stamps and of the schedule. */
export function createChangeRequestService(store: Store, now: Clock): ChangeRequestService {
  const find = (snapshot: Snapshot, id: string): ChangeRequest => {
    const request = snapshot.changeRequests.get(id)
    if (request === undefined) throw new NotFoundError(`no change request with id ${JSON.stringify(id)}`)
    return request
  }
  /** A request `principal` may see: flag:read in its environment, and every flag it changes in scope. */
  const visible = (principal: Principal, r: ChangeRequest) =>
    canIn(principal, 'flag:read', r.environment) && r.changes.every((c) => canSeeFlag(principal, c.flag))
  /** The state a request reaches with `approvals` in its environment, at its time. */
  const stateWith = (snapshot: Snapshot, r: Pick<ChangeRequest, 'environment' | 'scheduledAt'>, approvals: number): ChangeRequestState => {
    const needed = snapshot.environments.get(r.environment)?.requiredApprovals ?? 0
    if (approvals < needed) return 'open'
    return r.scheduledAt !== null ? 'scheduled' : 'approved'
  }
  /** Checks each change against the newest state; the base revisions they are made on. */
  const checked = (snapshot: Snapshot, principal: Principal, env: string, body: RequestInput) => {
    const problems: FieldProblem[] = []
    const baseRevisions: Record<string, number> = {}
    const at = now().toISOString()
    for (const [i, change] of body.changes.entries()) {
      const current = canSeeFlag(principal, change.flag) ? snapshot.flags.get(change.flag) : undefined
      if (current === undefined) {
        problems.push({ field: `changes[${i}].flag`, reason: `no flag named ${JSON.stringify(change.flag)}` })
        continue
      }
      setOwn(baseRevisions, change.flag, servedRevisionOf(current, env))
      if (change.delete === true) continue
      const made = withEnvironmentFields(snapshot, current, env, change.set, at, `changes[${i}].set.`)
      if ('problems' in made) problems.push(...made.problems)
    }
    if (problems.length > 0) throw new ValidationFailedError(problems)
    return baseRevisions
  }
  /** Applies `id` in one transaction as `caller` through `source`; a scheduled one `late` seconds late. */
  const applyNow = async (caller: Caller, id: string, source: 'api' | 'schedule', late?: number) => {
    const env = store.committed().changeRequests.get(id)?.environment
    const meta = { ...commitMeta(caller, source, env), changeRequest: id, ...(late !== undefined ? { lateSeconds: late } : {}) }
    const { result } = await store.transact(meta, (tx) => {
      const request = find(tx.read, id)
      // applied by another replica, or by another request, a moment ago: nothing to do
      if (request.state !== 'approved' && request.state !== 'scheduled') return { request, skipped: true }
      // the schedule acts for the author as the author stands now: one who may no longer fails it
      const problem = source === 'schedule' ? authorProblem(tx.read, request, caller.principal) : undefined
      if (problem !== undefined) return { ...failInTransaction(tx, request, now().toISOString(), problem), skipped: false }
      return { ...applyInTransaction(tx, request, now().toISOString()), skipped: false }
    })
    return result as { request: ChangeRequest; failureReason?: string; skipped: boolean }
  }
  const pending = (r: ChangeRequest, what: string) => {
    if (!PENDING_STATES.has(r.state))
      throw new ConflictError(`change request ${r.id} is ${r.state}; it can no longer be ${what}`, { state: r.state })
  }
  const isAuthor = (p: Principal, r: ChangeRequest) => actorOf(p).id === r.author.id
  const scheduler = (r: ChangeRequest): Caller => ({
    principal: principalOfActor(store.committed(), r.author, now().getTime()),
    requestId: newId('sched'),
  })
  /** After a request becomes due while approved (scheduled in the past), it is applied at once. */
  const dueNow = (r: ChangeRequest) => r.state === 'scheduled' && r.scheduledAt !== null && Date.parse(r.scheduledAt) <= now().getTime()
  // recorded as the schedule's, by the author, as any scheduled apply is
  const settle = async (r: ChangeRequest) => (dueNow(r) ? view((await applyNow(scheduler(r), r.id, 'schedule')).request) : view(r))

  return {
    async create(caller, input) {
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
        const baseRevisions = checked(tx.read, caller.principal, env, body)
        const at = now().toISOString()
        const request: ChangeRequest = {
          id: newId('cr'),
          environment: env,
          title: body.title,
          description: body.description,
          state: stateWith(tx.read, { environment: env, scheduledAt: body.scheduledAt }, 0),
          author: actorOf(caller.principal),
          changes: body.changes,
          baseRevisions,
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

    async edit(caller, id, input) {
      const body = parseRequestInput(input, false)
      if (body.changes.some(reachesEveryEnvironment)) requirePermission(caller.principal, 'flag:write')
      const { result } = await store.transact(commitMeta(caller), (tx) => {
        const request = find(tx.read, id)
        if (!isAuthor(caller.principal, request)) throw new AppError('FORBIDDEN', 'only the author edits a change request')
        pending(request, 'edited')
        reachesProtected(tx.read, request.environment, body)
        const baseRevisions = checked(tx.read, caller.principal, request.environment, body)
        const next: ChangeRequest = {
          ...request,
          title: body.title,
          description: body.description,
          changes: body.changes,
          scheduledAt: body.scheduledAt,
          baseRevisions,
          approvals: [],
          state: stateWith(tx.read, { environment: request.environment, scheduledAt: body.scheduledAt }, 0),
          updatedAt: now().toISOString(),
          revision: request.revision + 1,
        }
        tx.put('changeRequests', next)
        return next
      })
      return settle(result)
    },

    list(principal, filter) {
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
        .map(view)
    },

    get(principal, id) {
      requirePermissionSomewhere(principal, 'flag:read')
      const snapshot = store.committed()
      const request = find(snapshot, id)
      if (!visible(principal, request)) throw new NotFoundError(`no change request with id ${JSON.stringify(id)}`)
      const shown = view(request)
      // each change's difference from what the environment serves now
      shown.changes = request.changes.map((c) => {
        const row = snapshot.flags.get(c.flag)
        const current = row && (flagView(row, request.environment) as unknown as Record<string, unknown>)
        const diff: Record<string, { before: unknown; after: unknown }> = {}
        if (c.delete === true) diff.exists = { before: row !== undefined, after: false }
        for (const [field, after] of Object.entries(c.set)) {
          const before = current?.[field] ?? null
          if (JSON.stringify(before) !== JSON.stringify(after)) diff[field] = { before, after }
        }
        return { ...c, diff }
      })
      return shown
    },

    async approve(caller, id, input) {
      const comment = parseComment(input, false)
      const { result } = await store.transact(commitMeta(caller), (tx) => {
        const request = find(tx.read, id)
        requireIn(caller.principal, 'flag:approve', request.environment)
        if (actsForAuthor(tx.read, caller.principal, request))
          throw new AppError('FORBIDDEN', 'the author cannot approve their own change request (nor can a token of the same person)')
        pending(request, 'approved')
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

    async reject(caller, id, input) {
      const comment = parseComment(input, true) as string
      const { result } = await store.transact(commitMeta(caller), (tx) => {
        const request = find(tx.read, id)
        requireIn(caller.principal, 'flag:approve', request.environment)
        if (actsForAuthor(tx.read, caller.principal, request))
          throw new AppError('FORBIDDEN', 'the author does not reject their own change request: cancel it (POST …/cancel)')
        pending(request, 'rejected')
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
      return view(result)
    },

    async cancel(caller, id) {
      const { result } = await store.transact(commitMeta(caller), (tx) => {
        const request = find(tx.read, id)
        if (!isAuthor(caller.principal, request)) throw new AppError('FORBIDDEN', 'only the author cancels a change request')
        pending(request, 'cancelled')
        const next: ChangeRequest = { ...request, state: 'cancelled', updatedAt: now().toISOString(), revision: request.revision + 1 }
        tx.put('changeRequests', next)
        return next
      })
      return view(result)
    },

    async apply(caller, id) {
      const request = find(store.committed(), id)
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
      return view(outcome.request)
    },

    async applyDue() {
      const out: ScheduledOutcome[] = []
      const due = [...store.committed().changeRequests.values()].filter(dueNow)
      for (const request of due.sort((a, b) => ((a.scheduledAt as string) < (b.scheduledAt as string) ? -1 : 1))) {
        const lateMs = now().getTime() - Date.parse(request.scheduledAt as string)
        const late = lateMs >= 2000 ? Math.round(lateMs / 1000) : undefined
        const outcome = await applyNow(scheduler(request), request.id, 'schedule', late)
        if (outcome.skipped) continue
        out.push({
          request: view(outcome.request),
          ...(late !== undefined ? { lateSeconds: late } : {}),
          ...(outcome.failureReason !== undefined ? { failureReason: outcome.failureReason } : {}),
        })
      }
      return out
    },
  }
}
