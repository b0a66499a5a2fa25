/**
 * The rules prerequisites keep across flags (docs/api.md#prerequisites), checked by the store on every
 * transaction that writes flag rows, whatever path makes it (create, update, import, a change
 * request, promotion, archive, delete): a required flag exists, is not archived and has the
 * variants named; no cycle; no chain longer than five links; a flag others require is not deleted,
 * archived, renamed, given another type or stripped of a variant they name (`409` naming them).
 * And the consequence of a change: every flag that requires the changed one, through any chain,
 * gets a new revision in each environment where the change moved what it serves.
 */

import { sharedOf } from './environment.ts'
import { ConflictError, ValidationFailedError } from './errors.ts'
import { allVariants, type Flag, isArchived } from './flag.ts'
import { type FlagRow, flagIn, servedRevisionOf, stateIn } from './flag-row.ts'
import { ownValue, setOwn } from './own-property.ts'
import { PREREQUISITE_CHAIN_MAX } from './prerequisite.ts'
import { namesAsSeen, SEES_EVERY_FLAG, type SeesFlag } from './prerequisite-visibility.ts'
import { servedTargeting } from './rollout.ts'
import { closestSpelling } from './spelling-suggestion.ts'
import { EXPANDED_RULE_MAX, expandedRuleSize } from './targeting/expanded-size.ts'

/** One changed flag row of a transaction. */
export interface FlagRowChange {
  before: FlagRow | null
  after: FlagRow | null
}

/** Name → the names of the flags that require it directly (every flag, archived ones included). */
export type DependentIndex = ReadonlyMap<string, readonly string[]>

/** The dependent index of `flags` (one pass over the rows). */
export function dependentIndex(flags: ReadonlyMap<string, FlagRow>): DependentIndex {
  const out = new Map<string, string[]>()
  for (const row of flags.values()) {
    if (row.prerequisites === undefined) continue
    for (const p of row.prerequisites) {
      const list = out.get(p.flag)
      if (list === undefined) out.set(p.flag, [row.name])
      else list.push(row.name)
    }
  }
  for (const list of out.values()) list.sort()
  return out
}

/** The variants of a row: shared by every environment, the built-in ones included. */
const variantsOf = (row: FlagRow) => allVariants(row as unknown as Flag)

const json = (v: unknown) => JSON.stringify(v ?? null)

/** The flags below `name` through its prerequisites, as the longest chain of links (0: none). */
function depthBelow(flags: ReadonlyMap<string, FlagRow>, name: string, memo: Map<string, number>, open: Set<string>): number {
  const known = memo.get(name)
  if (known !== undefined) return known
  if (open.has(name)) return 0 // a cycle, reported on its own
  open.add(name)
  let depth = 0
  for (const p of flags.get(name)?.prerequisites ?? []) depth = Math.max(depth, 1 + depthBelow(flags, p.flag, memo, open))
  open.delete(name)
  memo.set(name, depth)
  return depth
}

/** The longest chain of flags requiring `name`, in links (0: none requires it). */
function heightAbove(index: DependentIndex, name: string, memo: Map<string, number>, open: Set<string>): number {
  const known = memo.get(name)
  if (known !== undefined) return known
  if (open.has(name)) return 0
  open.add(name)
  let height = 0
  for (const d of index.get(name) ?? []) height = Math.max(height, 1 + heightAbove(index, d, memo, open))
  open.delete(name)
  memo.set(name, height)
  return height
}

/** A cycle through `start` along prerequisites, as the names on it from `start` back to it, or `undefined`. */
function cycleThrough(flags: ReadonlyMap<string, FlagRow>, start: string): string[] | undefined {
  const path: string[] = []
  const done = new Set<string>()
  const walk = (name: string): boolean => {
    if (name === start && path.length > 0) return true
    if (done.has(name)) return false
    done.add(name)
    path.push(name)
    for (const p of flags.get(name)?.prerequisites ?? []) if (walk(p.flag)) return true
    path.pop()
    return false
  }
  return walk(start) ? [...path, start] : undefined
}

/**
 * The problems of `row`'s own prerequisites against `flags` (existence, archive, variants, cycles);
 * a flag the caller cannot see, newly required (not by `before`), is one that does not exist.
 */
function ownProblems(
  flags: ReadonlyMap<string, FlagRow>,
  row: FlagRow,
  before: FlagRow | null,
  sees: SeesFlag,
): { field: string; reason: string }[] {
  const out: { field: string; reason: string }[] = []
  const had = new Set((before?.prerequisites ?? []).map((p) => p.flag))
  for (const [i, p] of (row.prerequisites ?? []).entries()) {
    const at = `prerequisites[${i}]`
    const required = had.has(p.flag) || sees(p.flag) ? flags.get(p.flag) : undefined
    if (p.flag === row.name) out.push({ field: `${at}.flag`, reason: `${row.name} cannot require itself` })
    else if (required === undefined) {
      const near = closestSpelling(p.flag, [...flags.keys()].filter(sees))
      const hint = near === undefined ? '' : `; did you mean ${JSON.stringify(near)}?`
      out.push({ field: `${at}.flag`, reason: `${row.name} requires ${p.flag}, and there is no flag named so${hint}` })
    } else if (required.type === 'TAG')
      out.push({
        field: `${at}.flag`,
        reason: `${p.flag} is a TAG flag, which flagd's format cannot carry, so in-process providers could not evaluate it`,
      })
    else if (isArchived(required))
      out.push({ field: `${at}.flag`, reason: `${row.name} requires ${p.flag}, which is archived: restore it first` })
    else {
      const variants = variantsOf(required)
      for (const [j, v] of p.variants.entries())
        if (!Object.hasOwn(variants, v))
          out.push({
            field: `${at}.variants[${j}]`,
            reason: `${p.flag} has no variant ${JSON.stringify(v)} (its variants: ${Object.keys(variants).join(', ') || 'none'})`,
          })
    }
  }
  if (out.length > 0) return out
  const cycle = cycleThrough(flags, row.name)
  if (cycle !== undefined)
    out.push({
      field: 'prerequisites',
      reason: `a cycle: ${cycle.map((n) => (sees(n) ? n : "a flag outside this caller's flagPrefixes")).join(' requires ')}`,
    })
  return out
}

/** Why `before` → `after` breaks what its dependents rely on, or `undefined`. */
function brokenFor(before: FlagRow, after: FlagRow | null, dependents: readonly FlagRow[], sees: SeesFlag): [string, string[]] | undefined {
  const { text: names, seen } = namesAsSeen(
    dependents.map((d) => d.name),
    sees,
  )
  if (after === null) return [`flag ${before.name} is required by ${names}; change them first`, seen]
  if (isArchived(after) && !isArchived(before)) return [`flag ${before.name} is required by ${names}; change them first`, seen]
  if (after.name !== before.name) return [`flag ${before.name} is required by ${names} under its name; change them first`, seen]
  if (after.type !== before.type) return [`flag ${before.name} is required by ${names}; its type cannot change while they do`, seen]
  const variants = variantsOf(after)
  const losing = dependents.filter((d) =>
    (d.prerequisites ?? []).some((p) => p.flag === before.name && p.variants.some((v) => !Object.hasOwn(variants, v))),
  )
  if (losing.length === 0) return undefined
  const lost = namesAsSeen(
    losing.map((d) => d.name),
    sees,
  )
  return [`flag ${before.name} is required by ${lost.text} with a variant this change removes; change them first`, lost.seen]
}

/**
 * How large `name`'s rule becomes in flagd's format in `env` with its prerequisites written out
 * (docs/targeting.md#prerequisites-in-flagd-format), from above: its own rule with segments written
 * out, and twice each required flag's (seeding the splits of an inlined rule adds to it).
 */
function compiledSize(
  flags: ReadonlyMap<string, FlagRow>,
  name: string,
  env: string,
  segments: ReadonlyMap<string, unknown>,
  memo: Map<string, number>,
): number {
  const known = memo.get(name)
  if (known !== undefined) return known
  memo.set(name, 0)
  const row = flags.get(name)
  let size = 0
  if (row !== undefined) {
    const view = flagIn(row, env)
    size = expandedRuleSize(servedTargeting(view) ?? null, segments) + 200
    for (const p of row.prerequisites ?? [])
      size = Math.min(size + 2 * compiledSize(flags, p.flag, env, segments, memo) + 200, EXPANDED_RULE_MAX + 1)
  }
  memo.set(name, size)
  return size
}

/** The flags requiring `names` through any chain, and those names. */
function withDependents(index: DependentIndex, names: Iterable<string>): Set<string> {
  const out = new Set(names)
  const queue = [...out]
  while (queue.length > 0) for (const d of index.get(queue.shift() as string) ?? []) if (!out.has(d)) out.add(d) && queue.push(d)
  return out
}

/** Throws `400` when a flag touched by `changes`, or one requiring it, would be too large in flagd's format in some environment. */
function checkCompiledSizes(
  flags: ReadonlyMap<string, FlagRow>,
  index: DependentIndex,
  changes: readonly FlagRowChange[],
  segments: ReadonlyMap<string, unknown>,
  sees: SeesFlag,
): void {
  const touched = changes.flatMap((c) => (c.after === null ? [] : [c.after.name]))
  const reach = [...withDependents(index, touched)].filter((n) => flags.get(n)?.prerequisites !== undefined)
  if (reach.length === 0) return
  const envs = new Set(reach.flatMap((n) => Object.keys(flags.get(n)?.states ?? {})))
  for (const env of envs) {
    const memo = new Map<string, number>()
    for (const name of reach)
      if (compiledSize(flags, name, env, segments, memo) > EXPANDED_RULE_MAX)
        throw new ValidationFailedError([
          {
            field: 'prerequisites',
            reason: `${sees(name) ? name : "a flag outside this caller's flagPrefixes"} with its prerequisites written out in flagd's format would exceed ${EXPANDED_RULE_MAX / 1024} KiB in ${env}`,
          },
        ])
  }
}

/**
 * Checks a transaction's flag `changes` against `flags` (the rows it ends with) and answers the
 * dependent index it built; throws `ValidationFailedError` (400) for a flag's own prerequisites, or
 * `ConflictError` (409) naming the dependents a change would break; `sees` says which flags the
 * refusal may name to the caller.
 */
export function checkPrerequisiteGraph(
  flags: ReadonlyMap<string, FlagRow>,
  changes: readonly FlagRowChange[],
  segments: ReadonlyMap<string, unknown> = new Map(),
  sees: SeesFlag = SEES_EVERY_FLAG,
): DependentIndex {
  const index = dependentIndex(flags)
  const depths = new Map<string, number>()
  const heights = new Map<string, number>()
  for (const { before, after } of changes) {
    if (before !== null) {
      const live = (index.get(before.name) ?? []).flatMap((n) => (n === before.name ? [] : [flags.get(n) as FlagRow]))
      const broken = live.length > 0 ? brokenFor(before, after, live, sees) : undefined
      if (broken !== undefined) throw new ConflictError(broken[0], { field: 'name', dependents: broken[1] })
    }
    if (after === null || after.prerequisites === undefined) continue
    if (before !== null && before.name === after.name && json(before.prerequisites) === json(after.prerequisites)) continue
    const problems = ownProblems(flags, after, before, sees)
    if (problems.length > 0) throw new ValidationFailedError(problems)
    const links = heightAbove(index, after.name, heights, new Set()) + depthBelow(flags, after.name, depths, new Set())
    if (links > PREREQUISITE_CHAIN_MAX)
      throw new ValidationFailedError([
        {
          field: 'prerequisites',
          reason: `${after.name} would be in a chain of ${links} prerequisites; at most ${PREREQUISITE_CHAIN_MAX} links are allowed below any flag`,
        },
      ])
  }
  if (index.size > 0) checkCompiledSizes(flags, index, changes, segments, sees)
  return index
}

/** The environments where `before` → `after` moved what the flag serves (every one for a shared field, a create, a delete). */
function movedEnvironments(before: FlagRow | null, after: FlagRow | null): 'all' | string[] {
  if (before === null || after === null || before.name !== after.name || isArchived(before) !== isArchived(after)) return 'all'
  if (json(sharedOf(before)) !== json(sharedOf(after))) return 'all'
  return [...new Set([...Object.keys(before.states), ...Object.keys(after.states)])].filter(
    (env) => json(stateIn(before, env)) !== json(stateIn(after, env)),
  )
}

/**
 * The rows to write so each flag requiring a changed one, through any chain, has a new revision in
 * the environments where the change moved what it serves (docs/api.md#prerequisites): its other
 * environments keep the revision they last saw it change at. A dependent the transaction writes
 * itself (`written`, by name) is given the new revision there instead of a second one.
 */
export function dependentRevisions(
  flags: ReadonlyMap<string, FlagRow>,
  index: DependentIndex,
  changes: readonly FlagRowChange[],
  at: string,
): FlagRow[] {
  if (index.size === 0) return []
  const moved = new Map<string, 'all' | Set<string>>()
  const written = new Set(changes.flatMap((c) => (c.after === null ? [] : [c.after.name])))
  for (const { before, after } of changes) {
    const envs = movedEnvironments(before, after)
    if (envs !== 'all' && envs.length === 0) continue
    const queue = [...new Set([before?.name, after?.name].filter((n): n is string => n !== undefined))]
    const seen = new Set(queue)
    while (queue.length > 0) {
      for (const d of index.get(queue.shift() as string) ?? []) {
        if (seen.has(d)) continue
        seen.add(d)
        queue.push(d)
        const had = moved.get(d)
        if (had === 'all' || envs === 'all') moved.set(d, 'all')
        else moved.set(d, new Set([...(had ?? []), ...envs]))
      }
    }
  }
  const out: FlagRow[] = []
  for (const [name, envs] of moved) {
    const row = flags.get(name)
    if (row === undefined) continue
    // the environments that keep the revision they last saw: those the change did not reach, and,
    // for a row this transaction writes, only those its own write left behind
    const kept: Record<string, number> = {}
    for (const env of Object.keys(row.states)) {
      if (envs === 'all' || envs.has(env)) continue
      if (written.has(name) && ownValue(row.servedRevisions, env) === undefined) continue
      setOwn(kept, env, servedRevisionOf(row, env))
    }
    if (written.has(name) && json(kept) === json(row.servedRevisions ?? {})) continue
    const { servedRevisions: _old, ...bare } = row
    const revised: FlagRow = written.has(name) ? bare : { ...bare, updatedAt: at, revision: row.revision + 1 }
    out.push(Object.keys(kept).length > 0 ? { ...revised, servedRevisions: kept } : revised)
  }
  return out
}

/** The segments' rules by name, as the size check reads them. */
export function segmentRulesOf(segments: ReadonlyMap<string, { rule: unknown }>): Map<string, unknown> {
  return new Map([...segments].map(([name, s]) => [name, s.rule]))
}
