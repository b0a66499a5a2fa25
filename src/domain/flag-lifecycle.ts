/**
 * A flag's lifecycle (docs/api.md#lifecycle): its kind, owner and tags (shared fields, one value for
 * every environment), whether it has outlived its kind's expected lifetime (`potentiallyStale`),
 * and the list filters by them.
 */

import type { FieldProblem } from './errors.ts'
import { type Flag, isArchived } from './flag.ts'

export const FLAG_KINDS = ['release', 'experiment', 'operational', 'kill-switch', 'permission'] as const

/** One of the five kinds; `release` when none is set. */
export type FlagKind = (typeof FLAG_KINDS)[number]

/** The kind a flag has when none is set. */
export const DEFAULT_KIND: FlagKind = 'release'

export const OWNER_MAX = 100
export const TAGS_MAX = 20
export const TAG_MAX = 64
const TAG = /^[A-Za-z0-9._\-:/]{1,64}$/

/** Each kind's expected lifetime in days; `null`: none, never potentially stale (config `lifecycle.<kind>Days`). */
export type KindLifetimes = Readonly<Record<FlagKind, number | null>>

/** The expected lifetimes of Unleash's flag types, which the defaults follow. */
export const DEFAULT_LIFETIMES: KindLifetimes = {
  release: 40,
  experiment: 40,
  operational: 7,
  'kill-switch': null,
  permission: null,
}

/** True when `v` is one of the five kinds. */
export const isFlagKind = (v: unknown): v is FlagKind => typeof v === 'string' && (FLAG_KINDS as readonly string[]).includes(v)

/** Why `v` is not a tag, or `undefined`. */
export function tagProblem(v: unknown): string | undefined {
  if (typeof v !== 'string') return 'must be a string'
  return TAG.test(v) ? undefined : `must be 1-${TAG_MAX} of A-Z a-z 0-9 . _ - : /`
}

/**
 * Checks the lifecycle fields of `input` (absent or `null`: not set) and fills `out` with the valid
 * ones; each problem names its field. `release` is stored as no kind, so a flag reads the same either way.
 */
export function checkLifecycleFields(
  input: Record<string, unknown>,
  out: { kind?: FlagKind; owner?: string; tags?: string[] },
  problem: (field: string, reason: string) => void,
): void {
  const kind = input.kind
  if (kind !== undefined && kind !== null) {
    if (!isFlagKind(kind)) problem('kind', `must be one of ${FLAG_KINDS.join(', ')}`)
    else if (kind !== DEFAULT_KIND) out.kind = kind
  }
  const owner = input.owner
  if (owner !== undefined && owner !== null) {
    if (typeof owner !== 'string') problem('owner', 'must be a string')
    else if (owner.length === 0 || [...owner].length > OWNER_MAX) problem('owner', `must be 1-${OWNER_MAX} characters`)
    else out.owner = owner
  }
  const tags = input.tags
  if (tags !== undefined && tags !== null) {
    if (!Array.isArray(tags)) problem('tags', 'must be an array of strings')
    else if (tags.length > TAGS_MAX) problem('tags', `must have at most ${TAGS_MAX} tags`)
    else {
      const bad = tags.findIndex((t) => tagProblem(t) !== undefined)
      const repeated = tags.findIndex((t, i) => tags.indexOf(t) !== i)
      const shown = (i: number) => (JSON.stringify(tags[i]) ?? String(tags[i])).slice(0, 80)
      if (bad >= 0) problem('tags', `tag ${bad + 1} (${shown(bad)}) ${tagProblem(tags[bad])}`)
      else if (repeated >= 0) problem('tags', `repeats ${shown(repeated)}`)
      else if (tags.length > 0) out.tags = [...(tags as string[])]
    }
  }
}

/** The flag's kind (`release` when none is set). */
export const kindOf = (f: Pick<Flag, 'kind'>): FlagKind => f.kind ?? DEFAULT_KIND

/**
 * Whether `flag` has outlived its kind's expected lifetime since it was created, at `nowMs`
 * (docs/api.md#lifecycle); never for a kind without one.
 */
export function isPotentiallyStale(flag: Pick<Flag, 'kind' | 'createdAt'>, lifetimes: KindLifetimes, nowMs: number): boolean {
  const days = lifetimes[kindOf(flag)]
  if (days === null) return false
  return nowMs - Date.parse(flag.createdAt) > days * 86_400_000
}

/** The filters of `GET /api/flags` (docs/api.md#lifecycle): every one given must hold. */
export interface FlagListFilter {
  /** True: only archived flags; otherwise only the others. */
  archived?: boolean
  kind?: string
  owner?: string
  /** Every one of them. */
  tags?: readonly string[]
}

/** True when `filter` asks for nothing beyond the default list (the live flags). */
export const isPlainFilter = (filter: FlagListFilter): boolean =>
  filter.archived !== true && filter.kind === undefined && filter.owner === undefined && (filter.tags?.length ?? 0) === 0

/** The problems of a list filter from a query: an unknown kind, a malformed tag. */
export function filterProblems(filter: FlagListFilter): FieldProblem[] {
  const out: FieldProblem[] = []
  if (filter.kind !== undefined && !isFlagKind(filter.kind)) out.push({ field: 'kind', reason: `must be one of ${FLAG_KINDS.join(', ')}` })
  if (filter.owner !== undefined && (filter.owner.length === 0 || [...filter.owner].length > OWNER_MAX))
    out.push({ field: 'owner', reason: `must be 1-${OWNER_MAX} characters` })
  if ((filter.tags?.length ?? 0) > TAGS_MAX) out.push({ field: 'tag', reason: `at most ${TAGS_MAX} tags` })
  for (const tag of filter.tags ?? []) {
    const why = tagProblem(tag)
    if (why) out.push({ field: 'tag', reason: why })
  }
  return out
}

/** True when `flag` passes `filter`. */
export function matchesFilter(flag: Flag, filter: FlagListFilter): boolean {
  if (isArchived(flag) !== (filter.archived === true)) return false
  if (filter.kind !== undefined && kindOf(flag) !== filter.kind) return false
  if (filter.owner !== undefined && flag.owner !== filter.owner) return false
  for (const tag of filter.tags ?? []) if (!flag.tags?.includes(tag)) return false
  return true
}

/**
 * kind (when not release), owner and tags (joined with `,`) as flag metadata: what OFREP answers and
 * the flagd format carry (docs/targeting.md#flagd-format).
 */
export function lifecycleMetadata(flag: Pick<Flag, 'kind' | 'owner' | 'tags'>): Record<string, string> {
  const out: Record<string, string> = {}
  if (flag.kind !== undefined) out.kind = flag.kind
  if (flag.owner !== undefined) out.owner = flag.owner
  if (flag.tags !== undefined && flag.tags.length > 0) out.tags = flag.tags.join(',')
  return out
}
