/**
 * The statistics of a rollout's guard (decision record 0011): whether the variant being rolled out
 * (treatment) is worse than the others (control) by more than an allowed margin, judged in a way that
 * stays honest however often it is looked at. A guard is checked on every report of the
 * application's metrics; repeating a fixed-sample test at each look would trip, on two equal arms,
 * far more often than its `alpha` (the A/A simulation in test/domain/guard-statistics.test.ts shows
 * how much). So the difference of the arms gets an asymptotic confidence sequence: an interval that
 * holds at every sample size at once with probability at least 1 − alpha (Waudby-Smith, Arnold, Wu,
 * McAuliffe and Ramdas, "Time-uniform central limit theory and asymptotic confidence sequences",
 * Annals of Statistics, 2024; the normal-mixture boundary of its Theorem 2.2).
 *
 * For a difference with estimated variance V (of the difference itself) after N samples in all, the
 * interval is the estimate ± m(N)·√V with m(N) = √(2(Nρ²+1)/(Nρ²) · ln(√(Nρ²+1)/(2·alpha))): the
 * two-sided sequence at level 2·alpha, of which a guard uses only the upper side, so a false trip
 * has probability at most alpha. ρ sets the sample size where the interval is narrowest:
 * ρ² = (−2 ln(2·alpha) + ln(−2 ln(2·alpha) + 1)) / N*, with N* = 10 × `minSamples` per arm (both arms).
 */

/** Counts of one arm for an `error-rate` check. */
export interface RateArm {
  errors: number
  total: number
}

/** The summary of one arm for a `mean` check: a histogram's count, sum and buckets. */
export interface MeanArm {
  count: number
  sum: number
  /** Upper bounds of the buckets but the last (OpenTelemetry's explicit bounds), ascending. */
  bounds: readonly number[]
  /** Counts per bucket: `bounds.length + 1` of them. */
  buckets: readonly number[]
}

/** Treatment minus control, with the interval the guard judges by. */
export interface Difference {
  estimate: number
  lower: number
  upper: number
}

/** How wide the sequence is at `n` samples in all (see module comment). */
export function boundaryMultiplier(n: number, alpha: number, minSamples: number): number {
  const a = 2 * alpha
  const target = 2 * 10 * minSamples
  const rho2 = (-2 * Math.log(a) + Math.log(-2 * Math.log(a) + 1)) / target
  const nr = n * rho2
  return Math.sqrt(((2 * (nr + 1)) / nr) * Math.log(Math.sqrt(nr + 1) / a))
}

function interval(estimate: number, variance: number, n: number, alpha: number, minSamples: number): Difference {
  const half = boundaryMultiplier(n, alpha, minSamples) * Math.sqrt(variance)
  return { estimate, lower: estimate - half, upper: estimate + half }
}

/**
 * The difference of error rates, or `undefined` while an arm has fewer than `minSamples` requests.
 * Each arm's variance is the Bernoulli p(1−p), with p shrunk by half an error and half a success so
 * that an arm with no errors yet does not claim a certainty it has not earned.
 */
export function rateDifference(treatment: RateArm, control: RateArm, alpha: number, minSamples: number): Difference | undefined {
  if (treatment.total < minSamples || control.total < minSamples) return undefined
  const rate = (arm: RateArm) => arm.errors / arm.total
  const spread = (arm: RateArm) => {
    const p = (arm.errors + 0.5) / (arm.total + 1)
    return (p * (1 - p)) / arm.total
  }
  return interval(rate(treatment) - rate(control), spread(treatment) + spread(control), treatment.total + control.total, alpha, minSamples)
}

/** A histogram's mean and the variance of one observation, from its buckets' midpoints and widths (the open ends: their bound). */
export function histogramMoments(arm: MeanArm): { mean: number; variance: number } {
  const mean = arm.count === 0 ? 0 : arm.sum / arm.count
  let squares = 0
  let counted = 0
  for (const [i, count] of arm.buckets.entries()) {
    if (count === 0) continue
    const low = arm.bounds[i - 1]
    const high = arm.bounds[i]
    const point = low === undefined ? (high ?? mean) : high === undefined ? low : (low + high) / 2
    // the spread inside a bounded bucket too (its width² / 12, as if uniform in it): observations
    // that share one wide bucket are not taken for identical ones
    const inside = low === undefined || high === undefined ? 0 : (high - low) ** 2 / 12
    squares += count * ((point - mean) ** 2 + inside)
    counted += count
  }
  return { mean, variance: counted === 0 ? 0 : squares / counted }
}

/** The difference of histogram means, or `undefined` while an arm has fewer than `minSamples` observations or no bounds. */
export function meanDifference(treatment: MeanArm, control: MeanArm, alpha: number, minSamples: number): Difference | undefined {
  if (treatment.count < minSamples || control.count < minSamples) return undefined
  // without bounds the buckets tell no spread: a variance of 0 would trip on any difference at all
  // (docs/guarded-rollouts.md#what-a-guard-sees)
  if (treatment.bounds.length === 0 || control.bounds.length === 0) return undefined
  const t = histogramMoments(treatment)
  const c = histogramMoments(control)
  const variance = t.variance / treatment.count + c.variance / control.count
  return interval(t.mean - c.mean, variance, treatment.count + control.count, alpha, minSamples)
}

/** Whether a difference shows treatment worse than control by more than `maxIncrease`: the whole interval above it. */
export function trips(difference: Difference | undefined, maxIncrease: number): boolean {
  return difference !== undefined && difference.lower > maxIncrease
}
