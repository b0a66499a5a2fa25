/**
 * A rollout's guard (docs/guarded-rollouts.md): checks on the application's own metrics that stop a
 * progressive rollout by themselves when the variant being rolled out does worse than the others.
 * Treatment is what the rollout's `variant` was answered with, control every other variant of the
 * flag; both are counted from the moment the rollout was last written (`writtenAt`).
 *
 * This module holds the shapes a guard is written and stored in; their validation, the statistics
 * (guard-statistics.ts) and the watching (services) live beside it.
 */

import type { Difference } from './guard-statistics.ts'

/** What a guard does when a check trips: take the rollout's share to 0 for good, or hold it where it is. */
export type GuardAction = 'rollback' | 'pause'

/** The rate errors/total of treatment against control (two counters of the application). */
export interface ErrorRateCheck {
  kind: 'error-rate'
  errors: string
  total: string
  /** The increase of the rate (0–1) tolerated before the check trips; default 0. */
  maxIncrease?: number
}

/** The mean of a histogram (a latency, say) of treatment against control. */
export interface MeanCheck {
  kind: 'mean'
  histogram: string
  /** The increase of the mean (the metric's unit) tolerated; default 0. */
  maxIncrease?: number
}

/** No control and no statistics: treatment's increase of a counter over a sliding window, against a limit. */
export interface ThresholdCheck {
  kind: 'threshold'
  metric: string
  max: number
  windowSeconds: number
}

/** One check of a guard. */
export type GuardCheck = ErrorRateCheck | MeanCheck | ThresholdCheck

/** A guard as written on a rollout (`rollout.guard`). */
export interface Guard {
  checks: GuardCheck[]
  minSamples?: number
  alpha?: number
  action?: GuardAction
}

/** Defaults of a guard's optional fields. */
export const GUARD_DEFAULTS = { minSamples: 200, alpha: 0.05, action: 'rollback' as GuardAction }

/** One arm of a check as read and shown: `{total, errors, rate}`, `{count, mean}` or `{increase}` by kind. */
export type ArmReading =
  | { total: number; errors: number; rate: number | null }
  | { count: number; mean: number | null }
  | { increase: number }

/** The evidence a trip keeps (the audit entry's `guard` and the rollout's halt). */
export interface GuardEvidence {
  /** The index of the check that tripped, in `checks`. */
  check: number
  kind: GuardCheck['kind']
  treatment: ArmReading
  control: ArmReading | null
  difference: Difference | null
}

/** A rollout its guard stopped: kept on the rollout until the rollout is written again. */
export interface RolloutHalt extends GuardEvidence {
  status: 'paused' | 'rolled-back'
  /** ISO 8601 instant of the trip. */
  at: string
  /** The share at the trip (a paused rollout keeps it; a rolled-back one serves 0). */
  percent: number
}

/** The metric names a guard reads (each once). */
export function guardMetricNames(guard: Guard): string[] {
  const names = new Set<string>()
  for (const check of guard.checks) {
    if (check.kind === 'error-rate') {
      names.add(check.errors)
      names.add(check.total)
    } else if (check.kind === 'mean') names.add(check.histogram)
    else names.add(check.metric)
  }
  return [...names]
}
