/**
 * Progressive rollouts (docs/change-control.md#progressive-rollouts): `variant` is served to a share
 * of contexts that rises linearly from `fromPercent` at `start` to `toPercent` at `end`, in at most
 * 100 steps, sticky per bucket key (the flag key and the `targetingKey`, or the attribute `by`): a
 * context that got the variant at p % keeps it at every higher p. The rest get the flag's answer
 * without the rollout.
 *
 * The rollout is written in flagd's own rule language, on `$flagd.timestamp`, in front of the flag's
 * rule: one `fractional` split (in/out, in basis points) per step, picked by the time. So the same
 * rule is what OFREP evaluates here, what the flagd export and the gRPC sync send, and what
 * `@openfeature/flagd-core` evaluates in an application: every one of them moves at the same second,
 * with no job on the server.
 */

import type { FieldProblem } from './errors.ts'
import type { Flag, JsonObject } from './flag.ts'
import { parseIsoInstant } from './iso-instant.ts'
import { isJsonObject } from './json-object.ts'
import { unknownFieldReason } from './spelling-suggestion.ts'

/** A rollout as a flag's state holds it. */
export interface Rollout {
  variant: string
  /** ISO 8601 instants. */
  start: string
  end: string
  fromPercent: number
  toPercent: number
  /** The context attribute whose value keeps a context in its bucket (default: `targetingKey`). */
  by?: string
}

const FIELDS = new Set(['variant', 'start', 'end', 'fromPercent', 'toPercent', 'by'])
const BASIS = 10_000

/** The number of steps of a rollout: one per whole second of its window, at most 100, at least 1. */
export function stepsOf(r: Rollout): number {
  const seconds = Math.floor((Date.parse(r.end) - Date.parse(r.start)) / 1000)
  return Math.max(1, Math.min(100, seconds))
}

/** The second (Unix) step `k` (1 … steps) begins at. */
function stepSecond(r: Rollout, k: number, steps: number): number {
  const start = Date.parse(r.start) / 1000
  const end = Date.parse(r.end) / 1000
  return Math.ceil(start + ((end - start) * k) / steps)
}

/** The share of step `k` in basis points (0 … 10,000). */
function stepShare(r: Rollout, k: number, steps: number): number {
  return Math.round((r.fromPercent + ((r.toPercent - r.fromPercent) * k) / steps) * (BASIS / 100))
}

/** A rollout's steps, worked out once: the second each begins at, and its share in basis points. */
interface Steps {
  seconds: number[]
  shares: number[]
}
const stepTables = new WeakMap<Rollout, Steps>()

function stepTable(r: Rollout): Steps {
  let table = stepTables.get(r)
  if (table === undefined) {
    const steps = stepsOf(r)
    table = { seconds: [], shares: [stepShare(r, 0, steps)] }
    for (let k = 1; k <= steps; k++) {
      table.seconds.push(stepSecond(r, k, steps))
      table.shares.push(stepShare(r, k, steps))
    }
    stepTables.set(r, table)
  }
  return table
}

/** The step reached at `second`: how many step seconds have come (a binary search). */
function stepAt(table: Steps, second: number): number {
  let lo = 0
  let hi = table.seconds.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((table.seconds[mid] as number) <= second) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Where a rollout stands at `second` (Unix seconds): its share in percent and its step (0 before the first). */
export function rolloutAt(r: Rollout, second: number): { percent: number; step: number; steps: number } {
  const table = stepTable(r)
  const step = stepAt(table, second)
  return { percent: (table.shares[step] as number) / (BASIS / 100), step, steps: table.seconds.length }
}

/** The share at `second`, in basis points (what `inRollout` compares a bucket with). */
export function shareAt(r: Rollout, second: number): number {
  const table = stepTable(r)
  return table.shares[stepAt(table, second)] as number
}

/** The scale of shares: basis points. */
export const SHARE_SCALE = BASIS

/** The test "this context is in the share of `basisPoints`", as a flagd rule. */
function inShare(r: Rollout, basisPoints: number): unknown {
  if (basisPoints <= 0) return false
  if (basisPoints >= BASIS) return true
  const buckets = [
    ['in', basisPoints],
    ['out', BASIS - basisPoints],
  ]
  const split =
    r.by === undefined ? { fractional: buckets } : { fractional: [{ cat: [{ var: '$flagd.flagKey' }, { var: r.by }] }, ...buckets] }
  const test = { '==': [split, 'in'] }
  // a context without the attribute stays out, as one without a targetingKey does
  return r.by === undefined ? test : { and: [{ var: r.by }, test] }
}

/** The flag's rule with `r` in front of it: the variant for the contexts in the share, else `targeting` (or no rule). */
export function rolloutRule(r: Rollout, targeting: JsonObject | undefined): JsonObject {
  const steps = stepsOf(r)
  // the step is found by halving the steps on the time (7 comparisons for 100 steps, not 100)
  const share = (lo: number, hi: number): unknown => {
    if (lo === hi) return inShare(r, stepShare(r, lo, steps))
    const mid = Math.ceil((lo + hi) / 2)
    return { if: [{ '>=': [{ var: '$flagd.timestamp' }, stepSecond(r, mid, steps)] }, share(mid, hi), share(lo, mid - 1)] }
  }
  return { if: [share(0, steps), r.variant, targeting ?? null] }
}

// the served rule of each flag object (rows and views never change)
const served = new WeakMap<Flag, JsonObject | undefined>()

/**
 * The rule a flag is evaluated and exported with: its `targeting`, with its rollout in front when
 * it has one. Made once per flag object.
 */
export function servedTargeting(flag: Flag): JsonObject | undefined {
  if (flag.rollout === undefined) return flag.targeting
  if (served.has(flag)) return served.get(flag)
  const rule = rolloutRule(flag.rollout, flag.targeting)
  served.set(flag, rule)
  return rule
}

/** Checks a rollout (`variants`: the flag's variant names); problems name `rollout.<field>`. */
export function rolloutProblems(input: unknown, variants: ReadonlySet<string>): { rollout?: Rollout; problems: FieldProblem[] } {
  const problems: FieldProblem[] = []
  const problem = (field: string, reason: string) => problems.push({ field: `rollout${field ? `.${field}` : ''}`, reason })
  if (!isJsonObject(input)) {
    problem('', 'must be {variant, start, end, fromPercent, toPercent, by?}')
    return { problems }
  }
  for (const key of Object.keys(input)) if (!FIELDS.has(key)) problem(key, unknownFieldReason(key, FIELDS))
  const { variant, start, end, fromPercent, toPercent, by } = input
  if (variants.size === 0) problem('', 'a rollout serves one of the flag’s variants, and this flag has none')
  else if (typeof variant !== 'string' || !variants.has(variant))
    problem('variant', `must be one of the flag's variants: ${[...variants].slice(0, 10).join(', ')}`)
  const startMs = typeof start === 'string' ? parseIsoInstant(start) : undefined
  const endMs = typeof end === 'string' ? parseIsoInstant(end) : undefined
  if (startMs === undefined) problem('start', 'must be an ISO 8601 date-time with a zone')
  if (endMs === undefined) problem('end', 'must be an ISO 8601 date-time with a zone')
  if (startMs !== undefined && endMs !== undefined && startMs >= endMs) problem('end', 'must be after start')
  const percent = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 100
  if (!percent(fromPercent)) problem('fromPercent', 'must be a number from 0 to 100')
  if (!percent(toPercent)) problem('toPercent', 'must be a number from 0 to 100')
  if (percent(fromPercent) && percent(toPercent) && (fromPercent as number) > (toPercent as number))
    problem('toPercent', 'must be at least fromPercent (a rollout only rises)')
  if (by !== undefined && (typeof by !== 'string' || by === '' || by.length > 256)) problem('by', 'must be a context attribute name')
  if (problems.length > 0) return { problems }
  return {
    rollout: {
      variant: variant as string,
      start: new Date(startMs as number).toISOString(),
      end: new Date(endMs as number).toISOString(),
      fromPercent: fromPercent as number,
      toPercent: toPercent as number,
      ...(by !== undefined ? { by: by as string } : {}),
    },
    problems,
  }
}
