/**
 * What a rollout's guard sees (docs/guarded-rollouts.md#what-a-guard-sees): each check's treatment
 * and control arms read from the application's metrics, the difference with the interval it is
 * judged by, and the check's state. The same reading serves `GET /api/flags/{name}/rollout` and the
 * watcher that trips the guard, so what the API shows is what the guard decided on.
 */

import { type Difference, type MeanArm, meanDifference, rateDifference, trips } from './guard-statistics.ts'
import { type ArmReading, GUARD_DEFAULTS, type Guard, type GuardCheck } from './rollout-guard.ts'

/** What one variant reported for a metric over a span: a sum's increase or a histogram's summary. */
export type VariantTotals = { kind: 'sum'; increase: number } | ({ kind: 'histogram' } & MeanArm)

/** Each variant's totals of `metric` from `sinceMs` to now. */
export type TotalsOf = (metric: string, sinceMs: number) => ReadonlyMap<string, VariantTotals>

/** A check's state: too few samples to decide, no sign of harm, or stopped the rollout. */
export type CheckState = 'collecting' | 'healthy' | 'tripped'

/** One check as the guard reads it. */
export interface CheckReading {
  kind: GuardCheck['kind']
  state: CheckState
  treatment: ArmReading
  control: ArmReading | null
  difference: Difference | null
}

/** Where a guard reads from: the rollout's variant, the moment its counts start, and now. */
export interface GuardScope {
  variant: string
  sinceMs: number
  nowMs: number
}

const increaseOf = (t: VariantTotals | undefined): number => (t?.kind === 'sum' ? t.increase : 0)

/** A sum's increase split into the rollout's variant and all the others. */
function sumArms(totals: ReadonlyMap<string, VariantTotals>, variant: string): { treatment: number; control: number } {
  let control = 0
  for (const [name, t] of totals) if (name !== variant) control += increaseOf(t)
  return { treatment: increaseOf(totals.get(variant)), control }
}

/** Histograms added up (those whose bounds differ from the first are left out: their buckets cannot be added). */
function addHistograms(arms: readonly MeanArm[]): MeanArm {
  const first = arms[0]
  if (first === undefined) return { count: 0, sum: 0, bounds: [], buckets: [] }
  const buckets = [...first.buckets]
  let { count, sum } = first
  for (const arm of arms.slice(1)) {
    if (arm.bounds.length !== first.bounds.length || arm.bounds.some((b, i) => b !== first.bounds[i])) continue
    count += arm.count
    sum += arm.sum
    for (const [i, n] of arm.buckets.entries()) buckets[i] = (buckets[i] ?? 0) + n
  }
  return { count, sum, bounds: first.bounds, buckets }
}

function histogramArms(totals: ReadonlyMap<string, VariantTotals>, variant: string): { treatment: MeanArm; control: MeanArm } {
  const treatment: MeanArm[] = []
  const control: MeanArm[] = []
  for (const [name, t] of totals) if (t.kind === 'histogram') (name === variant ? treatment : control).push(t)
  return { treatment: addHistograms(treatment), control: addHistograms(control) }
}

/** Reads one check; `mayTrip` is false for a rollout that is not running (its checks count but never trip). */
export function readCheck(check: GuardCheck, guard: Guard, scope: GuardScope, totalsOf: TotalsOf, mayTrip: boolean): CheckReading {
  const alpha = guard.alpha ?? GUARD_DEFAULTS.alpha
  const minSamples = guard.minSamples ?? GUARD_DEFAULTS.minSamples
  const state = (difference: Difference | undefined, margin: number): CheckState =>
    difference === undefined ? 'collecting' : mayTrip && trips(difference, margin) ? 'tripped' : 'healthy'
  if (check.kind === 'error-rate') {
    const errors = sumArms(totalsOf(check.errors, scope.sinceMs), scope.variant)
    const total = sumArms(totalsOf(check.total, scope.sinceMs), scope.variant)
    // an application may report an error it never counted in the total: a rate is at most 1
    const arm = (e: number, n: number) => ({ errors: Math.min(e, n), total: n })
    const t = arm(errors.treatment, total.treatment)
    const c = arm(errors.control, total.control)
    const difference = rateDifference(t, c, alpha, minSamples)
    const shown = (a: { errors: number; total: number }) => ({
      total: a.total,
      errors: a.errors,
      rate: a.total > 0 ? a.errors / a.total : null,
    })
    return {
      kind: check.kind,
      state: state(difference, check.maxIncrease ?? 0),
      treatment: shown(t),
      control: shown(c),
      difference: difference ?? null,
    }
  }
  if (check.kind === 'mean') {
    const { treatment, control } = histogramArms(totalsOf(check.histogram, scope.sinceMs), scope.variant)
    const difference = meanDifference(treatment, control, alpha, minSamples)
    const shown = (a: MeanArm) => ({ count: a.count, mean: a.count > 0 ? a.sum / a.count : null })
    return {
      kind: check.kind,
      state: state(difference, check.maxIncrease ?? 0),
      treatment: shown(treatment),
      control: shown(control),
      difference: difference ?? null,
    }
  }
  // a threshold slides: the treatment's increase over the last windowSeconds (never before the counts start)
  const from = Math.max(scope.sinceMs, scope.nowMs - check.windowSeconds * 1000)
  const increase = increaseOf(totalsOf(check.metric, from).get(scope.variant))
  return {
    kind: check.kind,
    state: mayTrip && increase > check.max ? 'tripped' : 'healthy',
    treatment: { increase },
    control: null,
    difference: null,
  }
}

/** Reads every check of `guard`; `tripped` is the index of the first that tripped, or -1. */
export function readGuard(
  guard: Guard,
  scope: GuardScope,
  totalsOf: TotalsOf,
  mayTrip: boolean,
): { checks: CheckReading[]; tripped: number } {
  const checks = guard.checks.map((check) => readCheck(check, guard, scope, totalsOf, mayTrip))
  return { checks, tripped: checks.findIndex((c) => c.state === 'tripped') }
}
