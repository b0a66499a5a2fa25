/**
 * The rules every write of flags and segments obeys, whatever path makes it (docs/change-control.md#one-check-for-every-path):
 * the store runs `guardWrite` on each transaction's changes before it commits, knowing who acts and
 * whether an approved change request is being applied. A flag's state in an environment changes
 * only with `flag:write` there; creating, deleting and shared fields need the unscoped `flag:write`;
 * segments need it too, unconfined. Whatever would change what a protected environment serves
 * (its state, deleting the flag, its type, default value, metadata, a variant's value, its name,
 * the name of its answer, its prerequisites, or a segment its rules use) needs `flag:bypass` there or an approved
 * change request; a flag created there must start disabled with no value (`sealedState`). A
 * rollout's guard may write its trip alone, anywhere (docs/guarded-rollouts.md#when-a-guard-trips).
 */

import { can, requireFlagInScope, requirePermission, requireUnscoped } from './access-policy.ts'
import { answerVariant } from './answer-variant.ts'
import { type ChangeRequest, reachesEveryEnvironment } from './change-request.ts'
import { type Environment, type FlagState, sharedOf, stateOf } from './environment.ts'
import { ChangeRequestRequiredError, ForbiddenError } from './errors.ts'
import { allVariants, isArchived } from './flag.ts'
import { type FlagRow, flagIn, stateIn, withStateIn } from './flag-row.ts'
import { actorOf, type Principal } from './principal.ts'
import { haltOnly } from './rollout-written.ts'
import { referencedSegments, SEGMENTS_REACH, type Segment } from './segment.ts'

/** The state a flag gets in a protected environment when it is created there without `flag:bypass`. */
export const SEALED_STATE: FlagState = Object.freeze({ valueExists: false, enabled: false })

/** One changed row as the guard sees it (the store's pending change). */
export interface GuardedChange {
  table: string
  before: unknown
  after: unknown
}

/** The state a transaction ends with (the store's live snapshot fits). */
export interface GuardedState {
  readonly environments: ReadonlyMap<string, Environment>
  readonly flags: ReadonlyMap<string, FlagRow>
  readonly segments: ReadonlyMap<string, Segment>
}

/** Who writes, through what, and the change request being applied, if any. */
export interface WriteAuthority {
  principal: Principal
  /** An import (`import-upload`, `import-url`) writes flags by `migration:write` (docs/api.md#permissions). */
  source: string
  changeRequest?: string
}

/** Throws `ForbiddenError` unless `who` may write flags: in `env` when given, else unscoped (shared fields, create, delete). */
function requireFlagWrite(who: WriteAuthority, env?: string): void {
  const p = who.principal
  if ((who.source === 'import-upload' || who.source === 'import-url') && can(p, 'migration:write')) return
  requirePermission(p, 'flag:write', env)
}

/** Whether `p` may change protected environment `env` directly: `flag:bypass` there (the CLI and the drop folder never may). */
export function canBypass(p: Principal, env: string): boolean {
  return p.kind !== 'system' && (can(p, 'flag:bypass') || can(p, 'flag:bypass', env))
}

const json = (v: unknown) => JSON.stringify(v ?? null)

/** A state that serves nothing: disabled, no value, no rule, no rollout (an A/B share alone answers nothing). */
function isSealed(s: FlagState): boolean {
  return !s.valueExists && s.enabled === false && s.targeting === undefined && s.rollout === undefined
}

/** `record`'s entries in key order: the order of keys serves nothing. */
const sortedEntries = (record: Readonly<Record<string, unknown>>) => Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

/**
 * What `env` serves of the flag beyond its state (docs/change-control.md#protected-environments):
 * its name, type, default value, metadata (OFREP, the RPC service and the sync document carry it),
 * the variants of `names` (the built-in ones included: listing `{"true": false}` re-points a
 * built-in name) and the name of its answer without a rule (a new variant holding the served value,
 * or one named `value`, takes it over). The revision is left out: it moves with every change.
 */
function servedDefinition(row: FlagRow, env: string, names: readonly string[]): string {
  const view = { ...flagIn(row, env), revision: 0, servedRevision: 0 }
  const variants = allVariants(view)
  return json({
    name: view.name,
    type: view.type,
    defaultValue: view.defaultValue,
    metadata: sortedEntries(view.metadata ?? {}),
    answer: answerVariant(view)?.variant ?? null,
    variants: names.map((name) => (Object.hasOwn(variants, name) ? [name, variants[name]] : [name])),
    // what it requires decides when it answers its default (docs/api.md#prerequisites)
    prerequisites: view.prerequisites ?? null,
  })
}

/**
 * Whether what `env` serves of the flag moved from `before` to `after` (both present). The variants
 * compared are those `before` has: one added under a new name that takes no answer over serves
 * nothing yet, since a rule names only variants the flag had (docs/targeting.md#rules).
 */
function servedMoved(before: FlagRow, after: FlagRow, env: string): boolean {
  if (json(stateIn(before, env)) !== json(stateIn(after, env))) return true
  // archived or restored: the environment stops or starts serving it, as a delete or a create (docs/api.md#archive)
  if (isArchived(before) !== isArchived(after)) return true
  const names = Object.keys(allVariants(before)).sort()
  return servedDefinition(before, env, names) !== servedDefinition(after, env, names)
}

/** The approved (or scheduled) change request `id` when this transaction applies it. */
function appliedRequest(changes: readonly GuardedChange[], id: string | undefined): ChangeRequest | undefined {
  if (id === undefined) return undefined
  for (const c of changes) {
    if (c.table !== 'changeRequests') continue
    const [before, after] = [c.before as ChangeRequest | null, c.after as ChangeRequest | null]
    if (after?.id === id && after.state === 'applied' && (before?.state === 'approved' || before?.state === 'scheduled')) return before
  }
  return undefined
}

/**
 * Throws `ForbiddenError` unless `p` may apply `request` now (docs/change-control.md#who-applies), with
 * the permissions it holds at this moment: its author needs `flag:write` in the request's
 * environment (unscoped when it sets shared fields or deletes), an approver of it `flag:approve`
 * there, either one every flag in its scope; the command line may apply what others approved.
 */
export function requireMayApply(p: Principal, request: ChangeRequest): void {
  if (p.kind === 'system') return
  const me = actorOf(p).id
  // author or approver, a confined principal applies only flags in its scope
  for (const c of request.changes) requireFlagInScope(p, c.flag)
  if (me === request.author.id) {
    requirePermission(p, 'flag:write', request.environment)
    if (request.changes.some(reachesEveryEnvironment)) requirePermission(p, 'flag:write')
  } else if (request.approvals.some((a) => a.by.id === me)) requirePermission(p, 'flag:approve', request.environment)
  else throw new ForbiddenError('flag:write', request.environment)
}

/** Segments whose rule changed or that went, and every segment that refers to them, through any chain. */
function changedSegments(changes: readonly GuardedChange[], state: GuardedState): Set<string> {
  const affected = new Set<string>()
  const rules: unknown[] = [...state.segments.values()]
  for (const c of changes) {
    if (c.table !== 'segments') continue
    const before = c.before as Segment | null
    if (before === null) continue
    rules.push(before)
    // what its name stands for now (a row hidden by a newer one of the same name may go: nothing moves)
    const now = (c.after as Segment | null) ?? state.segments.get(before.name)
    if (now === undefined || json(before.rule) !== json(now.rule)) affected.add(before.name)
  }
  for (let grew = true; grew; ) {
    grew = false
    for (const s of rules as Segment[])
      if (!affected.has(s.name) && referencedSegments(s.rule).some((r) => affected.has(r))) {
        affected.add(s.name)
        grew = true
      }
  }
  return affected
}

/**
 * Checks a transaction's `changes` (the state it ends with: `state`) against `who`'s permissions and
 * every protected environment (see module comment); throws `ForbiddenError`, `OutOfScopeError` or
 * `ChangeRequestRequiredError` naming the environment. Answers the ids of the rows whose change
 * bypassed a protection (`flag:bypass`), for their audit entries.
 */
export function guardWrite(who: WriteAuthority, state: GuardedState, changes: readonly GuardedChange[]): string[] {
  const flagChanges = changes.filter((c) => c.table === 'flags')
  const segmentChanges = changes.filter((c) => c.table === 'segments')
  if (flagChanges.length === 0 && segmentChanges.length === 0) return []
  // a guard only takes exposure away, and is audited: its trip needs no change request, and it
  // may write nothing else (docs/guarded-rollouts.md#when-a-guard-trips)
  if (who.source === 'guard') {
    const [only] = flagChanges
    if (
      segmentChanges.length === 0 &&
      flagChanges.length === 1 &&
      only !== undefined &&
      haltOnly(only.before as FlagRow, only.after as FlagRow)
    )
      return []
    throw new ForbiddenError('flag:write')
  }
  const p = who.principal
  // an approved change request: its author's or approver's rights now instead of flag:write, and,
  // approved in a protected environment, no protection to bypass; a request of an unprotected
  // environment waives no other environment's protection (its shared fields reach them all)
  const request = appliedRequest(changes, who.changeRequest)
  if (request !== undefined) {
    requireMayApply(p, request)
    if (state.environments.get(request.environment)?.protected === true) return []
  }
  const checkRights = request === undefined
  const before = new Map(state.environments)
  for (const c of changes) {
    if (c.table !== 'environments') continue
    const [was, is] = [c.before as Environment | null, c.after as Environment | null]
    if (was === null && is !== null) before.delete(is.name)
    else if (was !== null) before.set(was.name, was)
  }
  // environments that exist on both sides: creating or removing one moves no flag of its own
  const lasting = [...state.environments.keys()].filter((env) => before.has(env))
  const guarded = lasting.filter((env) => state.environments.get(env)?.protected === true)
  // protected environment -> ids of the rows whose change moves what it serves
  const touched = new Map<string, Set<string>>()
  const touch = (env: string, id: string) => {
    const ids = touched.get(env) ?? new Set()
    ids.add(id)
    touched.set(env, ids)
  }
  for (const c of flagChanges) {
    const [was, is] = [c.before as FlagRow | null, c.after as FlagRow | null]
    const row = (is ?? was) as FlagRow
    const sharedMoved = was === null || is === null || was.name !== is.name || json(sharedOf(was)) !== json(sharedOf(is))
    const moved = lasting.filter((env) => was === null || is === null || json(stateIn(was, env)) !== json(stateIn(is, env)))
    if (!sharedMoved && moved.length === 0) continue
    if (checkRights) {
      for (const name of new Set([was?.name, is?.name])) if (name !== undefined) requireFlagInScope(p, name)
      if (sharedMoved) requireFlagWrite(who)
      else for (const env of moved) requireFlagWrite(who, env)
    }
    for (const env of guarded) {
      if (was === null && is !== null && isSealed(stateIn(is, env))) continue
      if (was === null || is === null || servedMoved(was, is, env)) touch(env, row.id)
    }
  }
  if (segmentChanges.length > 0) {
    requireFlagWrite(who)
    requireUnscoped(p, SEGMENTS_REACH)
    const affected = changedSegments(changes, state)
    const uses = (row: FlagRow, env: string) => referencedSegments(stateIn(row, env).targeting ?? null).some((name) => affected.has(name))
    if (affected.size > 0)
      for (const env of guarded)
        for (const row of state.flags.values())
          if (uses(row, env)) {
            touch(env, row.id)
            for (const c of segmentChanges) touch(env, ((c.after ?? c.before) as Segment).id)
          }
  }
  if (touched.size === 0) return []
  const bypassed = new Set<string>()
  for (const env of guarded) {
    const ids = touched.get(env)
    if (ids === undefined) continue
    if (!canBypass(p, env)) throw new ChangeRequestRequiredError(env)
    for (const id of ids) bypassed.add(id)
  }
  return [...bypassed]
}

/**
 * `row` (a new flag) with the state `SEALED_STATE` in every protected environment of `environments`
 * where `p` holds no `flag:bypass` (docs/change-control.md#protected-environments): a flag created
 * while an environment is protected starts there disabled, with no value, whatever the body says.
 */
export function sealedForProtected(row: FlagRow, environments: ReadonlyMap<string, Environment>, p: Principal): FlagRow {
  let out = row
  for (const env of environments.values()) {
    if (!env.protected || canBypass(p, env.name)) continue
    const { value: _v, targeting: _t, rollout: _r, ...kept } = stateIn(out, env.name)
    out = withStateIn(out, env.name, stateOf({ ...kept, ...SEALED_STATE }))
  }
  return out
}
