/**
 * Progressive rollouts (docs/change-control.md#progressive-rollouts): `variant` is served to a share
 * of contexts that rises linearly from `fromPercent` at `start` to `toPercent` at `end`, in at most
 * 100 steps, sticky per bucket key (the flag key and the `targetingKey`, or the attribute `by`): a
 * context that got the variant at p % keeps it at every higher p. The rest get the flag's answer
 * without the rollout.
 *
 * The rollout is written in flagd's own rule language, on `$flagd.timestamp`, in front of the flag's
 * rule: one `fractional` whose buckets are named by the step they join at, compared with the step
 * the time has reached (docs/change-control.md#flagds-form-of-a-rollout). So the same rule is what
 * OFREP evaluates here, what the flagd export and the gRPC sync send, and what
 * `@openfeature/flagd-core` evaluates in an application: every one of them moves at the same second,
 * with no job on the server.
 */

import type { FieldProblem } from './errors.ts'
import type { Flag, JsonObject } from './flag.ts'
import { parseIsoInstant } from './iso-instant.ts'
import { isJsonObject } from './json-object.ts'
import { type Guard, guardProblems, type RolloutHalt } from './rollout-guard.ts'
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
  /** Checks on the application's metrics that stop the rollout by themselves (docs/guarded-rollouts.md). */
  guard?: Guard
  /** Kept by the server: when the rollout was last written (ISO 8601); a guard counts from here. */
  writtenAt?: string
  /** Kept by the server: the trip that stopped the rollout, until it is written again. */
  halted?: RolloutHalt
}

const FIELDS = new Set(['variant', 'start', 'end', 'fromPercent', 'toPercent', 'by', 'guard'])
/**
 * Fields a rollout's input may carry that are not written: what a read shows (`status`, `percent`)
 * and what the server keeps (`writtenAt`, `halted`), so a client can send back what it read
 * (docs/guarded-rollouts.md#status-and-percent).
 */
const IGNORED = new Set(['status', 'percent', 'writtenAt', 'halted'])
const BASIS = 10_000

/** The number of steps of a rollout: one per whole second of its window, at most 100, at least 1. */
export function stepsOf(r: Rollout): number {
  const seconds = Math.floor((Date.parse(r.end) - Date.parse(r.start)) / 1000)
  return Math.max(1, Math.min(100, seconds))
}

/** A rollout worked out once: its start and window in milliseconds, its steps, each step's share in basis points. */
interface Ramp {
  start: number
  window: number
  steps: number
  shares: number[]
  /** The last second asked about and its step: most questions come in the same second. */
  second: number
  step: number
}
const ramps = new WeakMap<Rollout, Ramp>()

function rampOf(r: Rollout): Ramp {
  let ramp = ramps.get(r)
  if (ramp === undefined) {
    const start = Date.parse(r.start)
    const steps = stepsOf(r)
    const shares = Array.from({ length: steps + 1 }, (_, k) =>
      Math.round((r.fromPercent + ((r.toPercent - r.fromPercent) * k) / steps) * (BASIS / 100)),
    )
    ramp = { start, window: Date.parse(r.end) - start, steps, shares, second: Number.NaN, step: 0 }
    ramps.set(r, ramp)
  }
  return ramp
}

/**
 * How far a rollout has gone at `second`, on the scale where step `k` is reached at `k × window`:
 * `second × 1000 × steps − steps × start` in milliseconds, clamped to `0 … steps × window`. The flagd
 * rule computes exactly this, with the same operations on whole numbers (exact below 2^53, so for
 * any moment before the year 4800), so OFREP and every provider move at the same second.
 */
function progress(ramp: Ramp, second: number): number {
  return Math.min(ramp.steps * ramp.window, Math.max(0, second * (1000 * ramp.steps) - ramp.steps * ramp.start))
}

/** The step reached at `second`: the last `k` with `k × window ≤ progress`, so step `k` begins at the first whole second at or after `start + k × window / steps`. */
function stepAt(ramp: Ramp, second: number): number {
  if (second === ramp.second) return ramp.step
  const reached = progress(ramp, second)
  let k = Math.min(ramp.steps, Math.floor(reached / ramp.window))
  while (k < ramp.steps && (k + 1) * ramp.window <= reached) k++
  while (k > 0 && k * ramp.window > reached) k--
  ramp.second = second
  ramp.step = k
  return k
}

/** Where a rollout stands at `second` (Unix seconds): its share in percent and its step (0 before the first). */
export function rolloutAt(r: Rollout, second: number): { percent: number; step: number; steps: number } {
  const ramp = rampOf(r)
  const step = stepAt(ramp, second)
  return { percent: (ramp.shares[step] as number) / (BASIS / 100), step, steps: ramp.steps }
}

/** The share at `second`, in basis points (what `inRollout` compares a bucket with). */
export function shareAt(r: Rollout, second: number): number {
  const ramp = rampOf(r)
  return ramp.shares[stepAt(ramp, second)] as number
}

/** The scale of shares: basis points. */
export const SHARE_SCALE = BASIS

/**
 * The test "this context is in the rollout's share now", as one flagd rule that every flagd
 * evaluator reads (docs/change-control.md#flagds-form-of-a-rollout): one `fractional` over the
 * basis points whose buckets are named by the step at which they join (bucket `k` weighs what step
 * `k` adds to the share; the rest, `steps + 1`, never joins), and the bucket's step compared with
 * the step reached, computed from `$flagd.timestamp` with `*`, `-`, `max`, `min` and `<=`. A context
 * lands in the bucket it would in the one-split-per-step form, so the answers are the same.
 */
function inShareRule(r: Rollout): unknown {
  const { start, window, steps, shares } = rampOf(r)
  if ((shares[steps] as number) <= 0) return false
  const firstFull = shares.findIndex((share) => share >= BASIS)
  if (firstFull === 0) return true
  const buckets: [string, number][] = []
  let joined = 0
  for (const [k, share] of shares.entries()) {
    if (share > joined) buckets.push([String(k), share - joined])
    joined = share
  }
  if (joined < BASIS) buckets.push([String(steps + 1), BASIS - joined])
  const split =
    r.by === undefined ? { fractional: buckets } : { fractional: [{ cat: [{ var: '$flagd.flagKey' }, { var: r.by }] }, ...buckets] }
  // a context without the bucket key is out, as in any flagd split, until the share is 100 %
  const bucket = { if: [{ var: r.by ?? 'targetingKey' }, split, firstFull === -1 ? steps + 1 : firstFull] }
  const reached = { min: [steps * window, { max: [0, { '-': [{ '*': [{ var: '$flagd.timestamp' }, 1000 * steps] }, steps * start] }] }] }
  return { '<=': [{ '*': [bucket, window] }, reached] }
}

/** The flag's rule with `r` in front of it: the variant for the contexts in the share, else `targeting` (or no rule). */
export function rolloutRule(r: Rollout, targeting: JsonObject | undefined): JsonObject {
  return { if: [inShareRule(r), r.variant, targeting ?? null] }
}

const held = new WeakMap<Rollout, Rollout>()

/**
 * The rollout as served (docs/guarded-rollouts.md#when-a-guard-trips): itself until its guard
 * trips; none once rolled back (the flag answers as without it); once paused, a rollout held at the
 * share of the trip: its buckets are the same, so exactly the contexts that had the variant then
 * keep it, and no other gets it.
 */
export function servedRollout(r: Rollout): Rollout | undefined {
  if (r.halted === undefined) return r
  if (r.halted.status === 'rolled-back') return undefined
  let out = held.get(r)
  if (out === undefined) {
    const { guard: _guard, halted, writtenAt: _writtenAt, ...written } = r
    out = { ...written, fromPercent: halted.percent, toPercent: halted.percent }
    held.set(r, out)
  }
  return out
}

// the served rule of each flag object (rows and views never change)
const served = new WeakMap<Flag, JsonObject | undefined>()

/**
 * The rule a flag is evaluated and exported with: its `targeting`, with its rollout in front when
 * it has one. Made once per flag object.
 */
export function servedTargeting(flag: Flag): JsonObject | undefined {
  const rollout = flag.rollout && servedRollout(flag.rollout)
  if (rollout === undefined) return flag.targeting
  if (served.has(flag)) return served.get(flag)
  const rule = rolloutRule(rollout, flag.targeting)
  served.set(flag, rule)
  return rule
}

/**
 * A rollout as sent without the fields a write ignores (`status`, `percent`, what the server keeps):
 * what a change request keeps of it, so its diff shows only what it changes.
 */
export function writableRolloutInput(input: unknown): unknown {
  if (!isJsonObject(input)) return input
  return Object.fromEntries(Object.entries(input).filter(([key]) => !IGNORED.has(key)))
}

/** Checks a rollout (`variants`: the flag's variant names); problems name `rollout.<field>`. */
export function rolloutProblems(input: unknown, variants: ReadonlySet<string>): { rollout?: Rollout; problems: FieldProblem[] } {
  const problems: FieldProblem[] = []
  const problem = (field: string, reason: string) => problems.push({ field: `rollout${field ? `.${field}` : ''}`, reason })
  if (!isJsonObject(input)) {
    problem('', 'must be {variant, start, end, fromPercent, toPercent, by?, guard?}')
    return { problems }
  }
  for (const key of Object.keys(input)) if (!FIELDS.has(key) && !IGNORED.has(key)) problem(key, unknownFieldReason(key, FIELDS))
  const { variant, start, end, fromPercent, toPercent, by } = input
  const checked = input.guard === undefined || input.guard === null ? undefined : guardProblems(input.guard)
  if (checked) problems.push(...checked.problems)
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
      ...(checked?.guard ? { guard: checked.guard } : {}),
    },
    problems,
  }
}
