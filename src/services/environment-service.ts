/**
 * Environments as a resource (docs/environments.md): listed by anyone who may read flags, created,
 * changed and removed with `environment:write`. A new environment starts with every flag's state
 * copied from the default environment, or from `copyFrom`, in the same durable commit; removing one
 * drops its states. Neither changes any flag's revision: what each environment serves is unchanged.
 * The default environment (config `environment`) is the one a request naming none acts in, and it
 * cannot be removed; its states are stored like every other's. A default named anew in the config
 * starts as a copy of the previous default, which the environment rows mark
 * (docs/environments.md#the-default-environment).
 */

import { canSeeFlag, requirePermission, requirePermissionSomewhere } from '../domain/access-policy.ts'
import { PENDING_STATES } from '../domain/change-request.ts'
import type { Clock } from '../domain/clock.ts'
import { codePointCount } from '../domain/code-points.ts'
import { type Environment, environmentNameProblem, type FlagState, MAX_ENVIRONMENTS } from '../domain/environment.ts'
import { colorProblem, effectiveColor } from '../domain/environment-color.ts'
import { ConflictError, InvalidError, NotFoundError, ValidationFailedError } from '../domain/errors.ts'
import { DESCRIPTION_MAX } from '../domain/flag-definition.ts'
import { type FlagRow, stateIn, withStateIn } from '../domain/flag-row.ts'
import { isJsonObject } from '../domain/json-object.ts'
import { ownValue } from '../domain/own-property.ts'
import { namingEnvironment } from '../domain/permission.ts'
import type { Caller } from '../domain/principal.ts'
import { type RolloutRead, rolloutRead } from '../domain/rollout-status.ts'
import { unknownFieldReason } from '../domain/spelling-suggestion.ts'
import type { Snapshot, Store, Tx } from '../storage/store.ts'
import { commitMeta } from './commit-meta.ts'
import { readableEnvironments } from './environment-access.ts'
import { createPromotionService, type PromotionService } from './environment-promotion.ts'

/** What `PUT /api/environments/{name}` takes. */
export interface EnvironmentInput {
  description?: string
  protected?: boolean
  requiredApprovals?: number
  copyFrom?: string
  /** A CSS colour; `null` goes back to the default for the name (docs/api.md#environment-colours). */
  color?: string | null
}

/** An environment as the API shows it. */
export type EnvironmentResource = Omit<Environment, 'id' | 'default' | 'color'> & { default: boolean; color: string }

/** The environment use cases; compare and promote come from `environment-promotion.ts`. */
export interface EnvironmentService extends PromotionService {
  list(caller: Caller): EnvironmentResource[]
  put(caller: Caller, name: string, input: unknown): Promise<{ environment: EnvironmentResource; created: boolean }>
  remove(caller: Caller, name: string): Promise<void>
  /**
   * A flag's state in every environment the caller may read, in the order they were made (`404`
   * when it does not exist for the caller, or `env` names no environment).
   */
  statesOf(caller: Caller, name: string, env?: string): Record<string, ShownState>
  /**
   * Makes the default environment at start when it is missing (a copy of the previous default, if
   * any: its flag states and its protection), and marks it; answers the previous default when the
   * default changed, and whether the new one was made.
   */
  ensureDefault(caller: Caller): Promise<DefaultChange | undefined>
  /** The default environment's name (config `environment`). */
  readonly defaultName: string
  /** Whether an environment of this name exists. */
  has(name: string): boolean
}

/** A flag's state as reads show it: its rollout with `status` and `percent` (docs/guarded-rollouts.md#status-and-percent). */
export type ShownState = Omit<FlagState, 'rollout'> & { rollout?: RolloutRead }

/** `state` as reads show it at `nowMs`. */
function shownState(state: FlagState, nowMs: number): ShownState {
  const { rollout, ...rest } = state
  return rollout === undefined ? rest : { ...rest, rollout: rolloutRead(rollout, nowMs) }
}

const FIELDS = new Set(['description', 'protected', 'requiredApprovals', 'copyFrom', 'color'])

/** Checks the body of a PUT; every problem at once. */
function parseInput(input: unknown): EnvironmentInput {
  if (!isJsonObject(input)) throw new InvalidError('the body must be a JSON object', 'body', 'must be a JSON object')
  const problems: { field: string; reason: string }[] = []
  for (const key of Object.keys(input)) if (!FIELDS.has(key)) problems.push({ field: key, reason: unknownFieldReason(key, FIELDS) })
  const { description, protected: guarded, requiredApprovals, copyFrom, color } = input
  if (description !== undefined && (typeof description !== 'string' || codePointCount(description, DESCRIPTION_MAX) > DESCRIPTION_MAX))
    problems.push({ field: 'description', reason: `must be a string of at most ${DESCRIPTION_MAX} characters` })
  if (guarded !== undefined && typeof guarded !== 'boolean') problems.push({ field: 'protected', reason: 'must be true or false' })
  if (
    requiredApprovals !== undefined &&
    !(Number.isSafeInteger(requiredApprovals) && (requiredApprovals as number) >= 0 && (requiredApprovals as number) <= 10)
  )
    problems.push({ field: 'requiredApprovals', reason: 'must be an integer from 0 to 10' })
  if (copyFrom !== undefined && typeof copyFrom !== 'string') problems.push({ field: 'copyFrom', reason: 'must be an environment name' })
  const badColor = color === null || color === undefined ? undefined : colorProblem(color)
  if (badColor) problems.push({ field: 'color', reason: badColor })
  if (problems.length > 0) throw new ValidationFailedError(problems)
  return input as EnvironmentInput
}

/** A change of the default environment at start: the one served before, and whether the new one was made as its copy. */
export interface DefaultChange {
  previous: string
  made: boolean
}

/** Creates the service; `defaultName` is config `environment`; `now` stamps the rows. */
export function createEnvironmentService(store: Store, defaultName: string, now: Clock): EnvironmentService {
  const resource = (e: Environment): EnvironmentResource => ({
    name: e.name,
    description: e.description,
    protected: e.protected,
    requiredApprovals: e.requiredApprovals,
    color: effectiveColor(e),
    default: e.name === defaultName,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  })
  const ordered = (s: Snapshot) =>
    [...s.environments.values()].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.name < b.name ? -1 : 1))

  /** Gives every flag `name`'s state, copied from `from` (rows keep their revision). */
  const copyStates = (tx: Tx, name: string, from: string) => {
    for (const row of tx.read.flags.values()) tx.put('flags', withStateIn(row, name, stateIn(row, from)))
  }
  /** Drops every flag's state of `name` (rows keep their revision). */
  const dropStates = (tx: Tx, name: string) => {
    for (const row of tx.read.flags.values()) {
      if (ownValue(row.states, name) === undefined) continue
      const { [name]: _gone, ...states } = row.states
      const { servedRevisions, ...rest } = row
      const { [name]: _seen, ...served } = servedRevisions ?? {}
      const kept: FlagRow = { ...rest, states }
      tx.put('flags', Object.keys(served).length === 0 ? kept : { ...kept, servedRevisions: served })
    }
  }

  return {
    ...createPromotionService(store, now),
    defaultName,
    has: (name) => store.committed().environments.has(name),

    list(caller) {
      requirePermissionSomewhere(caller.principal, 'flag:read')
      return ordered(store.committed()).map(resource)
    },

    async put(caller, name, input) {
      requirePermission(caller.principal, 'environment:write')
      const body = parseInput(input)
      const why = environmentNameProblem(name)
      if (why) throw new InvalidError(`environment name ${JSON.stringify(name)} ${why}`, 'name', why)
      const at = now().toISOString()
      const { result } = await store.transact(commitMeta(caller), (tx) => {
        const current = tx.read.environments.get(name)
        if (current !== undefined) {
          if (body.copyFrom !== undefined) throw new InvalidError('copyFrom is taken on create only', 'copyFrom', 'on create only')
          const { color: _old, ...rest } = current
          const color = body.color === undefined ? current.color : (body.color ?? undefined)
          const next: Environment = {
            ...rest,
            description: body.description ?? current.description,
            protected: body.protected ?? current.protected,
            requiredApprovals: body.requiredApprovals ?? current.requiredApprovals,
            ...(color === undefined ? {} : { color }),
            updatedAt: at,
          }
          tx.put('environments', next)
          return { environment: next, created: false }
        }
        if (tx.read.environments.size >= MAX_ENVIRONMENTS)
          throw new InvalidError(`at most ${MAX_ENVIRONMENTS} environments`, 'name', `at most ${MAX_ENVIRONMENTS} environments`)
        const from = body.copyFrom ?? defaultName
        if (!tx.read.environments.has(from))
          throw new InvalidError(`no environment named ${JSON.stringify(from)} to copy from`, 'copyFrom', 'unknown environment')
        const made: Environment = {
          id: name,
          name,
          description: body.description ?? '',
          protected: body.protected ?? false,
          requiredApprovals: body.requiredApprovals ?? 0,
          ...(typeof body.color === 'string' ? { color: body.color } : {}),
          createdAt: at,
          updatedAt: at,
        }
        tx.put('environments', made)
        copyStates(tx, name, from)
        return { environment: made, created: true }
      })
      return { environment: resource(result.environment), created: result.created }
    },

    async remove(caller, name) {
      requirePermission(caller.principal, 'environment:write')
      await store.transact(commitMeta(caller), (tx) => {
        const env = tx.read.environments.get(name)
        if (env === undefined) throw new NotFoundError(`no environment named ${JSON.stringify(name)}`)
        if (name === defaultName) throw new ConflictError(`${name} is the default environment; it cannot be removed`)
        // a token bound to it, a permission for it, or a change request still to land in it would
        // come back to life with a namesake: refused (docs/environments.md#managing-environments)
        const holders = [
          ...[...tx.read.users.values()].filter((u) => namingEnvironment(u.permissions, name).length > 0).map((u) => `user ${u.username}`),
          ...[...tx.read.tokens.values()]
            .filter((t) => t.environment === name || namingEnvironment(t.permissions, name).length > 0)
            .map((t) => `token ${t.name}`),
          ...[...tx.read.changeRequests.values()]
            .filter((r) => r.environment === name && PENDING_STATES.has(r.state))
            .map((r) => `change request ${r.id}`),
        ]
        if (holders.length > 0)
          throw new ConflictError(
            `environment ${name} is still named by ${holders.join(', ')}: change their permissions, revoke the tokens, and settle the change requests first`,
            { usedBy: holders },
          )
        tx.delete('environments', name)
        dropStates(tx, name)
      })
    },

    statesOf(caller, name, env) {
      requirePermissionSomewhere(caller.principal, 'flag:read')
      const snapshot = store.committed()
      if (env !== undefined && !snapshot.environments.has(env)) throw new NotFoundError(`no environment named ${JSON.stringify(env)}`)
      const row = canSeeFlag(caller.principal, name) ? snapshot.flags.get(name) : undefined
      if (row === undefined) throw new NotFoundError(`no flag named ${JSON.stringify(name)}`)
      // only the environments the caller may read
      const readable = readableEnvironments(caller.principal)
      const nowMs = now().getTime()
      return Object.fromEntries(
        ordered(snapshot)
          .filter((e) => readable === undefined || readable.has(e.name))
          .map((e) => [e.name, shownState(stateIn(row, e.name), nowMs)]),
      )
    },

    async ensureDefault(caller) {
      const current = (read: Snapshot) => read.environments.get(defaultName)?.default === true
      if (current(store.committed())) return undefined
      const at = now().toISOString()
      const { result } = await store.transact(commitMeta(caller), (tx): DefaultChange | undefined => {
        if (current(tx.read)) return undefined
        const environments = [...tx.read.environments.values()]
        // the default the daemon served before (else, on data from before the mark, the one made first)
        const previous = environments.find((e) => e.default === true) ?? ordered(tx.read)[0]
        for (const e of environments)
          if (e.default === true) {
            const { default: _mark, ...unmarked } = e
            tx.put('environments', unmarked)
          }
        const existing = tx.read.environments.get(defaultName)
        if (existing !== undefined) {
          tx.put('environments', { ...existing, default: true })
          return previous === undefined ? undefined : { previous: previous.name, made: false }
        }
        // a default named anew (config changed) starts as a copy of the previous default: its flag
        // states and its protection, so a changed config does not take applications off a protected state
        tx.put('environments', {
          id: defaultName,
          name: defaultName,
          description: '',
          protected: previous?.protected ?? false,
          requiredApprovals: previous?.requiredApprovals ?? 0,
          default: true,
          createdAt: at,
          updatedAt: at,
        })
        if (previous === undefined) return undefined
        copyStates(tx, defaultName, previous.name)
        return { previous: previous.name, made: true }
      })
      return result
    },
  }
}
