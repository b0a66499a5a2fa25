/**
 * Flag use cases (docs/api.md#flags): create, read, partial update with rename and type change, delete.
 * Each write is one store transaction that reads the newest state, checks `If-Match` as a
 * compare-and-swap (`tx.expect`), validates the result as a whole and writes it, so of N writers
 * holding the same revision exactly one wins. Rejected requests change nothing; a no-op update
 * writes nothing.
 */

import {
  canSeeFlag,
  canSomewhere,
  flagScopeOf,
  requireFlagInScope,
  requirePermission,
  requirePermissionSomewhere,
  visiblePrefixes,
} from '../domain/access-policy.ts'
import type { Clock } from '../domain/clock.ts'
import { sharedOf, stateOf } from '../domain/environment.ts'
import { ConflictError, type FieldProblem, InvalidError, NotFoundError, ValidationFailedError } from '../domain/errors.ts'
import { definitionOf, type Flag, isArchived } from '../domain/flag.ts'
import { validateDefinition } from '../domain/flag-definition.ts'
import { type FlagListFilter, filterProblems, isPlainFilter, matchesFilter } from '../domain/flag-lifecycle.ts'
import { nameCollision, nameProblem } from '../domain/flag-name.ts'
import type { FlagRow } from '../domain/flag-row.ts'
import { mergeUpdate } from '../domain/flag-update.ts'
import { requireJsonObject } from '../domain/json-object.ts'
import { newId } from '../domain/new-id.ts'
import type { Caller, Principal } from '../domain/principal.ts'
import { asWritten } from '../domain/rollout-written.ts'
import { sealedForProtected } from '../domain/write-guard.ts'
import type { Snapshot, Source, Store, Tx } from '../storage/store.ts'
import { commitMeta } from './commit-meta.ts'
import { requireIn } from './environment-access.ts'
import { flagView } from './environment-views.ts'
import { archivedConflict, archiveFlag, dependentsOf } from './flag-archive.ts'
import { createFlagReadModel, type FlagReadModel } from './flag-read-model.ts'
import { bornIn, carryStates } from './flag-states.ts'
import { createPatternGate, type PatternGate } from './pattern-gate.ts'

/** `If-Match` as the HTTP layer parsed it: any revision (`*`), or a list of revisions. */
export type IfMatch = '*' | readonly number[]

/** The flag use cases. */
export interface FlagService {
  readonly read: FlagReadModel
  /** The flag as environment `env` serves it (`404` for a flag or an environment that does not exist). */
  get(principal: Principal, name: string, env?: string): Flag
  /** The flags under `prefix` as JSON text; `filter` (docs/api.md#lifecycle): archived ones only, a kind, an owner, tags. */
  list(principal: Principal, prefix: string, env?: string, filter?: FlagListFilter): string
  /** Whether a flag of this name exists (routing only: it tells nothing a caller may not know). */
  exists(name: string): boolean
  /** The ETag of `list(principal, prefix, env, filter)`: moves with every flag change, rollout step and flag turning stale; differs between scopes and filters. */
  listTag(principal: Principal, env?: string, filter?: FlagListFilter): string
  /**
   * `env` (docs/environments.md): the environment that gets the body's per-environment fields; every
   * other one then starts with the type's defaults (no value, enabled). Without it every environment
   * starts with the body's. Answers the flag as `env` sees it.
   */
  create(caller: Caller, input: unknown, env?: string): Promise<Flag>
  /** `source` is `rollback` when the patch restores an earlier revision (recorded so in the audit log). */
  /**
   * `env` (default: the default environment): the environment whose state the patch's per-environment
   * fields change; shared fields change every environment. Answers the flag as `env` sees it.
   */
  update(caller: Caller, name: string, patch: Record<string, unknown>, ifMatch?: IfMatch, source?: Source, env?: string): Promise<Flag>
  /**
   * Deletes the flag as a whole, from every environment; `env` only has to name one (`404`
   * otherwise), since every flag route takes `?environment=` (docs/environments.md#flags-in-an-environment).
   */
  remove(caller: Caller, name: string, ifMatch?: IfMatch, env?: string): Promise<void>
  /** Archives the flag (docs/api.md#archive): kept, but unknown to every evaluation path. Answers it as `env` sees it. */
  archive(caller: Caller, name: string, env?: string): Promise<Flag>
  /** Restores an archived flag exactly as it was, at a new revision. */
  restore(caller: Caller, name: string, env?: string): Promise<Flag>
  /** The flags that require `name` directly, in name order, those `principal` may see (docs/api.md#prerequisites). */
  dependents(principal: Principal, name: string, env?: string): string[]
}

const notFound = (name: string) => new NotFoundError(`no flag named ${JSON.stringify(name)}`)

/** `env` when it names an environment of `snapshot`; `404` otherwise (docs/environments.md). */
function knownEnvironment(snapshot: Snapshot, env: string): string {
  if (!snapshot.environments.has(env)) throw new NotFoundError(`no environment named ${JSON.stringify(env)}`)
  return env
}

function findIn(snapshot: Snapshot, name: string): FlagRow {
  const flag = snapshot.flags.get(name)
  if (!flag) throw notFound(name)
  return flag
}

/** States the `If-Match` precondition on `flag` inside a transaction (412 when it does not hold). */
function expectRevision(tx: Tx, flag: FlagRow, ifMatch: IfMatch | undefined): void {
  if (ifMatch === undefined || ifMatch === '*') return
  const wanted = ifMatch.includes(flag.revision) ? flag.revision : (ifMatch[0] ?? 0)
  tx.expect('flags', flag.id, wanted, `flag ${flag.name}`)
}

/** The message when a change would take the service past `limits.maxFlags`. */
export function flagLimitMessage(maxFlags: number): string {
  return `the service holds at most ${maxFlags} flags (limits.maxFlags); delete flags or raise the limit`
}

/** Throws 409 unless `name` is free for a flag (`ignore`: the flag being renamed). */
export function checkFreeName(snapshot: Snapshot, name: string, ignore?: string): void {
  const taken = snapshot.flags.get(name)
  if (taken !== undefined && name !== ignore) {
    // an archived flag keeps its name (docs/api.md#archive)
    if (isArchived(taken))
      throw new ConflictError(`flag ${name} already exists, archived; restore it or choose another name`, { field: 'name', archived: true })
    throw new ConflictError(`flag ${name} already exists`, { field: 'name' })
  }
  const other = nameCollision(name, snapshot.flags.keys(), ignore)
  if (other !== undefined) {
    const why = other.startsWith(`${name}/`)
      ? `${name} is a group holding flag ${other}`
      : `flag ${other} exists, so ${other}/ cannot be a group`
    throw new ConflictError(`name ${name} is not free: ${why}`, { field: 'name', conflictsWith: other })
  }
}

/**
 * Creates the flag service over a store and its read model (the cached one in production);
 * `environment`: the default one, which a call naming none acts in (config `environment`).
 */
export function createFlagService(
  store: Store,
  maxFlags: number,
  now: Clock,
  environment: string,
  gate: PatternGate = createPatternGate(),
  read: FlagReadModel = createFlagReadModel(store, environment, now),
): FlagService {
  return {
    read,

    get(principal, name, env) {
      requirePermissionSomewhere(principal, 'flag:read')
      // outside a token's flagPrefixes a flag does not exist: the same 404 as for a missing one
      if (!canSeeFlag(principal, name)) throw notFound(name)
      const snapshot = store.committed()
      if (env !== undefined) knownEnvironment(snapshot, env)
      requireIn(principal, 'flag:read', env ?? environment)
      return flagView(findIn(snapshot, name), env ?? environment)
    },

    list(principal, prefix, env, filter = {}) {
      requirePermissionSomewhere(principal, 'flag:read')
      const problems = filterProblems(filter)
      if (problems.length > 0) throw new ValidationFailedError(problems)
      if (env !== undefined) knownEnvironment(store.committed(), env)
      requireIn(principal, 'flag:read', env ?? environment)
      const scope = flagScopeOf(principal)
      // a prefix without the "/" is a whole name (that flag or its group): the list is filtered by name
      if (scope.some((s) => !s.endsWith('/')) || !isPlainFilter(filter))
        return `[${read
          .list(visiblePrefixes(scope, prefix), env)
          .filter((f) => canSeeFlag(principal, f.name) && matchesFilter(f, filter))
          .map((f) => read.json(f))
          .join(',')}]`
      return read.listJson(visiblePrefixes(scope, prefix), env)
    },

    exists: (name) => store.committed().flags.has(name),

    listTag(principal, env, filter = {}) {
      requirePermissionSomewhere(principal, 'flag:read')
      // a rollout's status and percent move with the time, and a flag turns potentially stale with
      // it (docs/api.md#lifecycle): so does the tag of a list showing them
      const phase = env === undefined || store.committed().environments.has(env) ? read.rolloutPhase(env) : ''
      const epoch = read.staleEpoch()
      const revision = `${store.committed().revisionOf('flags')}${phase === '' ? '' : `.${phase}`}${epoch === 0 ? '' : `s${epoch}`}`
      const scope = flagScopeOf(principal)
      const filtered = isPlainFilter(filter)
        ? ''
        : `\u0000${JSON.stringify([filter.archived === true, filter.kind, filter.owner, filter.tags])}`
      const key = scope.join('\n') + filtered
      return key === '' ? `"${revision}"` : `"${revision}-${Bun.hash.wyhash(key, 0n).toString(36)}"`
    },

    async create(caller, input, env) {
      requirePermission(caller.principal, 'flag:write')
      const body = requireJsonObject(input)
      if (typeof body.name === 'string') requireFlagInScope(caller.principal, body.name)
      const problems: FieldProblem[] = []
      const whyName = Object.hasOwn(body, 'name') ? nameProblem(body.name) : 'required'
      if (whyName) problems.push({ field: 'name', reason: whyName })
      // a pattern check may take a good part of a second: one at a time, the event loop free between.
      // Validation runs inside the transaction, against the newest state: a segment the rule names
      // may have been made a moment ago on another replica, or deleted since the request came.
      const release = body.regexPattern !== undefined || body.jsonSchema !== undefined ? await gate.enter() : undefined
      let pending: ReturnType<typeof store.transact<Flag>>
      try {
        // its audit entry shows the flag as the environment it was made in sees it
        pending = store.transact({ ...commitMeta(caller), shownIn: env ?? environment }, (tx) => {
          const result = validateDefinition(body, { ignoreFields: ['name'], segments: tx.read.segmentRules() })
          if (!result.ok) throw new ValidationFailedError([...problems, ...result.problems])
          if (problems.length > 0) throw new ValidationFailedError(problems)
          const name = body.name as string
          if (tx.read.flags.size >= maxFlags)
            throw new InvalidError(flagLimitMessage(maxFlags), 'name', `the limit of ${maxFlags} flags (limits.maxFlags) is reached`)
          checkFreeName(tx.read, name)
          const at = now().toISOString()
          const made: Flag = { id: newId('flg'), name, ...result.definition, createdAt: at, updatedAt: at, revision: 1 }
          const target = env === undefined ? environment : knownEnvironment(tx.read, env)
          // the named environment (the default one too) gets the body's state, every other one the
          // type's defaults; unnamed, every environment gets it; a protected environment gets it
          // disabled, with no value (docs/change-control.md#protected-environments)
          const row = env === undefined ? carryStates(tx.read, made, undefined, target) : bornIn(tx.read, made, target)
          const flag = sealedForProtected(row, tx.read.environments, caller.principal)
          tx.put('flags', flag)
          return flagView(flag, target)
        })
      } finally {
        release?.()
      }
      const out = await pending
      return out.result
    },

    async update(caller, name, patch, ifMatch, source, env) {
      // which environment, and whether shared fields change, is known in the transaction
      requirePermissionSomewhere(caller.principal, 'flag:write')
      requireFlagInScope(caller.principal, name)
      if (typeof patch.name === 'string') requireFlagInScope(caller.principal, patch.name)
      // the check runs inside the transaction's work, which runs when transact is called
      const stored = store.committed().flags.get(name)
      const costly =
        patch.regexPattern !== undefined ||
        patch.jsonSchema !== undefined ||
        stored?.regexPattern !== undefined ||
        stored?.jsonSchema !== undefined
      const release = costly ? await gate.enter() : undefined
      let pending: ReturnType<typeof store.transact<Flag>>
      try {
        pending = store.transact(commitMeta(caller, source, env ?? environment), (tx) => {
          const current = findIn(tx.read, name)
          expectRevision(tx, current, ifMatch)
          if (isArchived(current)) throw archivedConflict(name)
          const problems: FieldProblem[] = []
          const newName = Object.hasOwn(patch, 'name') ? patch.name : name
          const whyName = nameProblem(newName)
          if (whyName) problems.push({ field: 'name', reason: whyName })
          // the environment written: its view is what the patch applies to
          const target = env === undefined ? environment : knownEnvironment(tx.read, env)
          const seen = flagView(current, target)
          // any write acts in an environment: its permission first, even for a change that moves nothing
          requireIn(caller.principal, 'flag:write', target)
          // it answers the view written: a reader of some environments must read this one, a
          // write-only caller is answered what it writes (docs/environments.md#permissions)
          if (canSomewhere(caller.principal, 'flag:read')) requireIn(caller.principal, 'flag:read', target)
          const result = validateDefinition(mergeUpdate(seen, patch), { ignoreFields: ['name'], segments: tx.read.segmentRules() })
          if (!result.ok) problems.push(...result.problems)
          if (problems.length > 0 || !result.ok) throw new ValidationFailedError(problems)
          // shared fields change what every environment serves: they need the unscoped permission
          // the rollout as written: what the server keeps on it is no part of the comparison
          const before = asWritten(definitionOf(seen))
          const stateMoves = JSON.stringify(stateOf(result.definition)) !== JSON.stringify(stateOf(before))
          const sharedMoves = newName !== name || JSON.stringify(sharedOf(result.definition)) !== JSON.stringify(sharedOf(before))
          if (sharedMoves) requirePermission(caller.principal, 'flag:write')
          // a protected environment changes through change requests: the store refuses the write
          // otherwise, whatever path makes it (docs/change-control.md#one-check-for-every-path)
          if (!sharedMoves && !stateMoves) return seen
          if (newName !== name) checkFreeName(tx.read, newName as string, name)
          const written: Flag = {
            id: current.id,
            name: newName as string,
            ...result.definition,
            createdAt: current.createdAt,
            updatedAt: now().toISOString(),
            revision: current.revision + 1,
          }
          const next = carryStates(tx.read, written, current, target)
          tx.put('flags', next)
          return flagView(next, target)
        })
      } finally {
        release?.()
      }
      const out = await pending
      return out.result
    },

    async remove(caller, name, ifMatch, env) {
      requirePermission(caller.principal, 'flag:write')
      requireFlagInScope(caller.principal, name)
      await store.transact({ ...commitMeta(caller), shownIn: env ?? environment }, (tx) => {
        if (env !== undefined) knownEnvironment(tx.read, env)
        const current = findIn(tx.read, name)
        expectRevision(tx, current, ifMatch)
        tx.delete('flags', current.id)
      })
    },

    dependents(principal, name, env) {
      requirePermissionSomewhere(principal, 'flag:read')
      if (!canSeeFlag(principal, name)) throw notFound(name)
      const snapshot = store.committed()
      if (env !== undefined) knownEnvironment(snapshot, env)
      requireIn(principal, 'flag:read', env ?? environment)
      findIn(snapshot, name)
      return dependentsOf(snapshot, name).filter((n) => canSeeFlag(principal, n))
    },

    archive: (caller, name, env) => archiveFlag(store, now, caller, name, true, env ?? environment, env ?? environment),
    restore: (caller, name, env) => archiveFlag(store, now, caller, name, false, env ?? environment, env ?? environment),
  }
}
