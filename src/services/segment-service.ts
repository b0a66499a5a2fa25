/**
 * Segment use cases (docs/targeting.md#rules): list and read with `usedBy`, create or replace by name, and
 * delete. A segment stands for its rule wherever a rule says `{"$ref": name}`, so changing one
 * changes the answers of every flag that uses it (directly or through other segments): the same
 * transaction gives each such flag a new revision, which moves its ETags and OFREP events and is
 * recorded in the audit log like any flag change. Deleting a segment that a flag or segment still
 * refers to is refused, naming them.
 */

import { canSeeFlag, requirePermission, requirePermissionSomewhere, requireUnscoped } from '../domain/access-policy.ts'
import type { Clock } from '../domain/clock.ts'
import { codePointCount } from '../domain/code-points.ts'
import { AppError, NotFoundError, ValidationFailedError } from '../domain/errors.ts'
import type { JsonObject } from '../domain/flag.ts'
import { DESCRIPTION_MAX } from '../domain/flag-definition.ts'
import { type FlagRow, revisedEverywhere } from '../domain/flag-row.ts'
import { segmentRuleProblems } from '../domain/flag-targeting-fields.ts'
import { isJsonObject } from '../domain/json-object.ts'
import { newId } from '../domain/new-id.ts'
import { ownValue } from '../domain/own-property.ts'
import type { Caller, Principal } from '../domain/principal.ts'
import { referencedSegments, SEGMENTS_REACH, type Segment } from '../domain/segment.ts'
import { unknownFieldReason } from '../domain/spelling-suggestion.ts'
import { VARIANT_NAME } from '../domain/variant-name.ts'
import type { Snapshot, Store } from '../storage/store.ts'
import { commitMeta } from './commit-meta.ts'
import { requireIn } from './environment-access.ts'

/** Where a segment is used: the flags and segments whose rules refer to it. */
export interface SegmentUse {
  flags: string[]
  segments: string[]
}

/** The segment use cases. */
export interface SegmentService {
  /** Every segment; `usedBy` names the flags using it in environment `env` (default: the default one). */
  list(principal: Principal, env?: string): { segment: Segment; usedBy: SegmentUse }[]
  get(principal: Principal, name: string, env?: string): { segment: Segment; usedBy: SegmentUse }
  /** Creates or replaces `name`; `created` says which. */
  put(caller: Caller, name: string, input: unknown): Promise<{ segment: Segment; usedBy: SegmentUse; created: boolean }>
  remove(caller: Caller, name: string): Promise<void>
}

/**
 * The rules of a flag row: every environment's (docs/environments.md), or only environment `env`'s
 * when given.
 */
export function rulesOf(row: FlagRow, env?: string): JsonObject[] {
  if (env !== undefined) {
    const state = ownValue(row.states, env)
    return state?.targeting ? [state.targeting] : []
  }
  return Object.values(row.states).flatMap((s) => (s.targeting ? [s.targeting] : []))
}

/**
 * The flags and segments of `snapshot` that refer to segment `name` directly: in the rules of
 * environment `env` when given, else in any environment's (what a delete must refuse).
 */
export function usesOf(snapshot: Snapshot, name: string, env?: string): SegmentUse {
  const flags: string[] = []
  for (const flag of snapshot.flags.values())
    if (rulesOf(flag, env).some((rule) => referencedSegments(rule).includes(name))) flags.push(flag.name)
  const segments: string[] = []
  for (const segment of snapshot.segments.values()) if (referencedSegments(segment.rule).includes(name)) segments.push(segment.name)
  return { flags: flags.sort(), segments: segments.sort() }
}

/** Every flag whose answers depend on segment `name`, through any chain of segments. */
export function flagsDependingOn(snapshot: Snapshot, name: string): FlagRow[] {
  const affected = new Set([name])
  for (let grew = true; grew; ) {
    grew = false
    for (const segment of snapshot.segments.values())
      if (!affected.has(segment.name) && referencedSegments(segment.rule).some((r) => affected.has(r))) {
        affected.add(segment.name)
        grew = true
      }
  }
  // any environment's rule: a segment's change moves the answers wherever it is used
  return [...snapshot.flags.values()].filter((f) => rulesOf(f).some((rule) => referencedSegments(rule).some((r) => affected.has(r))))
}

/** `use` as `principal` may see it: flags outside a token's prefixes do not exist for it, here either. */
function visibleUse(principal: Principal, use: SegmentUse): SegmentUse {
  return { flags: use.flags.filter((name) => canSeeFlag(principal, name)), segments: use.segments }
}

/**
 * The environment whose uses a read shows (`env`, else the default one), checked: `404` when
 * unknown, `403` when `principal` may not read it (segments themselves are shared).
 */
function environmentRead(principal: Principal, snapshot: Snapshot, env: string | undefined, fallback: string): string {
  requirePermissionSomewhere(principal, 'flag:read')
  if (env !== undefined && !snapshot.environments.has(env)) throw new NotFoundError(`no environment named ${JSON.stringify(env)}`)
  requireIn(principal, 'flag:read', env ?? fallback)
  return env ?? fallback
}

const notFound = (name: string) => new NotFoundError(`no segment named ${JSON.stringify(name)}`)

/** The body of `PUT /api/segments/{name}`, checked: every problem at once. */
function parseBody(name: string, input: unknown, snapshot: Snapshot): { description: string; rule: JsonObject } {
  const problems: { field: string; reason: string }[] = []
  if (!VARIANT_NAME.test(name)) problems.push({ field: 'name', reason: 'a segment name is 1 to 64 of A-Z a-z 0-9 . _ -' })
  if (!isJsonObject(input)) throw new ValidationFailedError([{ field: 'body', reason: 'must be a JSON object: {description?, rule}' }])
  for (const key of Object.keys(input))
    if (key !== 'description' && key !== 'rule') problems.push({ field: key, reason: unknownFieldReason(key, ['description', 'rule']) })
  const description = input.description ?? ''
  if (typeof description !== 'string') problems.push({ field: 'description', reason: 'must be a string' })
  else if (codePointCount(description, DESCRIPTION_MAX) > DESCRIPTION_MAX)
    problems.push({ field: 'description', reason: `must be at most ${DESCRIPTION_MAX} characters` })
  if (!Object.hasOwn(input, 'rule')) problems.push({ field: 'rule', reason: 'required' })
  else {
    const others = new Map(snapshot.segmentRules())
    others.delete(name)
    problems.push(...segmentRuleProblems(name, input.rule, others))
  }
  if (problems.length > 0) throw new ValidationFailedError(problems)
  return { description: description as string, rule: input.rule as JsonObject }
}

/** Creates the segment service over a store; `environment`: the default one, whose uses a read naming none shows. */
export function createSegmentService(store: Store, now: Clock, environment: string): SegmentService {
  const find = (snapshot: Snapshot, name: string): Segment => {
    const segment = snapshot.segments.get(name)
    if (!segment) throw notFound(name)
    return segment
  }
  return {
    list(principal, env) {
      const snapshot = store.committed()
      const where = environmentRead(principal, snapshot, env, environment)
      return [...snapshot.segments.values()]
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .map((segment) => ({ segment, usedBy: visibleUse(principal, usesOf(snapshot, segment.name, where)) }))
    },

    get(principal, name, env) {
      const snapshot = store.committed()
      const where = environmentRead(principal, snapshot, env, environment)
      return { segment: find(snapshot, name), usedBy: visibleUse(principal, usesOf(snapshot, name, where)) }
    },

    async put(caller, name, input) {
      requirePermission(caller.principal, 'flag:write')
      requireUnscoped(caller.principal, SEGMENTS_REACH)
      const out = await store.transact({ ...commitMeta(caller), shownIn: environment }, (tx) => {
        const { description, rule } = parseBody(name, input, tx.read)
        const current = tx.read.segments.get(name)
        const at = now().toISOString()
        if (current && current.description === description && JSON.stringify(current.rule) === JSON.stringify(rule))
          return { segment: current, created: false }
        const segment: Segment = current
          ? { ...current, description, rule, updatedAt: at, revision: current.revision + 1 }
          : { id: newId('seg'), name, description, rule, createdAt: at, updatedAt: at, revision: 1 }
        tx.put('segments', segment)
        if (current && JSON.stringify(current.rule) !== JSON.stringify(rule))
          for (const flag of flagsDependingOn(tx.read, name)) tx.put('flags', revisedEverywhere(flag, at))
        return { segment, created: current === undefined }
      })
      return { ...out.result, usedBy: usesOf(store.committed(), name, environment) }
    },

    async remove(caller, name) {
      requirePermission(caller.principal, 'flag:write')
      requireUnscoped(caller.principal, SEGMENTS_REACH)
      await store.transact(commitMeta(caller), (tx) => {
        const segment = find(tx.read, name)
        const used = usesOf(tx.read, name)
        if (used.flags.length > 0 || used.segments.length > 0) {
          const users = [...used.flags.map((f) => `flag ${f}`), ...used.segments.map((s) => `segment ${s}`)]
          throw new AppError('CONFLICT', `segment ${name} is still used by ${users.join(', ')}: change their rules first`, {
            usedBy: used,
          })
        }
        tx.delete('segments', segment.id)
      })
    },
  }
}
