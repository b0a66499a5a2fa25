/**
 * A rollout's guard (docs/guarded-rollouts.md): checks on the application's own metrics that stop a
 * progressive rollout by themselves when the variant being rolled out does worse than the others.
 * Treatment is what the rollout's `variant` was answered with, control every other variant of the
 * flag; both are counted from the moment the rollout was last written (`writtenAt`).
 *
 * This module holds the shapes a guard is written and stored in; their validation, the statistics
 * (guard-statistics.ts) and the watching (services) live beside it.
 */

import type { FieldProblem } from './errors.ts'
import type { Difference } from './guard-statistics.ts'
import { isJsonObject } from './json-object.ts'
import { unknownFieldReason } from './spelling-suggestion.ts'

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

/** OpenTelemetry's instrument-name syntax: a letter, then up to 254 letters, digits, `_ . - /`. */
const METRIC_NAME = /^[A-Za-z][A-Za-z0-9_.\-/]{0,254}$/
const GUARD_FIELDS = new Set(['checks', 'minSamples', 'alpha', 'action'])
const CHECK_FIELDS: Record<GuardCheck['kind'], Set<string>> = {
  'error-rate': new Set(['kind', 'errors', 'total', 'maxIncrease']),
  mean: new Set(['kind', 'histogram', 'maxIncrease']),
  threshold: new Set(['kind', 'metric', 'max', 'windowSeconds']),
}
const KINDS = Object.keys(CHECK_FIELDS)
/** At most this many checks on one guard. */
export const GUARD_CHECKS_MAX = 5

/** What each metric field of a check names, said when it is missing (docs/guarded-rollouts.md#a-guard). */
const METRIC_ROLES = {
  errors: 'the counter of failed requests',
  total: 'the counter of every request',
  histogram: 'the histogram whose mean is compared',
  metric: 'the counter whose increase is watched',
}

const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)

/** One check: its problems through `problem` (field relative to the check), the check when valid. */
function checkOf(input: unknown, report: (field: string, reason: string) => void): GuardCheck | undefined {
  let found = 0
  const problem = (field: string, reason: string) => {
    found++
    report(field, reason)
  }
  if (!isJsonObject(input)) {
    problem('', 'must be {kind, ...}: an error-rate, mean or threshold check')
    return undefined
  }
  const kind = input.kind as GuardCheck['kind']
  if (typeof kind !== 'string' || !Object.hasOwn(CHECK_FIELDS, kind)) {
    problem('kind', `must be one of ${KINDS.join(', ')}`)
    return undefined
  }
  const fields = CHECK_FIELDS[kind]
  for (const key of Object.keys(input)) if (!fields.has(key)) problem(key, unknownFieldReason(key, fields))
  const metric = (field: keyof typeof METRIC_ROLES) => {
    const v = input[field]
    if (v === undefined) problem(field, `is required: ${METRIC_ROLES[field]} (a metric name)`)
    else if (typeof v !== 'string' || !METRIC_NAME.test(v))
      problem(field, 'must be a metric name: 1 to 255 characters, a letter first, then letters, digits, _ . - /')
    return v as string
  }
  const increase = (max: number) => {
    const v = input.maxIncrease
    if (v === undefined) return {}
    if (!finite(v) || v < 0 || v > max) problem('maxIncrease', max === 1 ? 'must be a rate from 0 to 1' : 'must be a number of at least 0')
    return { maxIncrease: v as number }
  }
  let check: GuardCheck
  if (kind === 'error-rate') check = { kind, errors: metric('errors'), total: metric('total'), ...increase(1) }
  else if (kind === 'mean') check = { kind, histogram: metric('histogram'), ...increase(Number.POSITIVE_INFINITY) }
  else {
    const { max, windowSeconds } = input
    if (!finite(max) || max < 0) problem('max', 'must be a number of at least 0')
    if (!Number.isInteger(windowSeconds) || (windowSeconds as number) < 10 || (windowSeconds as number) > 86_400)
      problem('windowSeconds', 'must be a whole number of seconds from 10 to 86400')
    check = { kind, metric: metric('metric'), max: max as number, windowSeconds: windowSeconds as number }
  }
  return found === 0 ? check : undefined
}

/**
 * Checks a rollout's `guard` (docs/guarded-rollouts.md#a-guard): 1–5 checks of a known kind on
 * metric names OpenTelemetry allows, `minSamples` 10–1,000,000, `alpha` 0.001–0.2, `action`
 * rollback or pause. Problems name `rollout.guard.<field>` (`rollout.guard.checks[1].errors`).
 */
export function guardProblems(input: unknown): { guard?: Guard; problems: FieldProblem[] } {
  const problems: FieldProblem[] = []
  const problem = (field: string, reason: string) => problems.push({ field: `rollout.guard${field ? `.${field}` : ''}`, reason })
  if (!isJsonObject(input)) {
    problem('', 'must be {checks, minSamples?, alpha?, action?}')
    return { problems }
  }
  for (const key of Object.keys(input)) if (!GUARD_FIELDS.has(key)) problem(key, unknownFieldReason(key, GUARD_FIELDS))
  const { checks, minSamples, alpha, action } = input
  const valid: GuardCheck[] = []
  // the index in `checks` of each valid one (problems name it)
  const validAt: number[] = []
  if (!Array.isArray(checks) || checks.length === 0 || checks.length > GUARD_CHECKS_MAX)
    problem('checks', `must be a list of 1 to ${GUARD_CHECKS_MAX} checks`)
  else
    for (const [i, raw] of checks.entries()) {
      const check = checkOf(raw, (field, reason) => problem(`checks[${i}]${field ? `.${field}` : ''}`, reason))
      if (check) {
        valid.push(check)
        validAt.push(i)
      }
    }
  // a metric is kept as a counter or as a histogram: a check reading it as the other would see nothing
  const readAs = new Map<string, { kind: 'counter' | 'histogram'; at: number }>()
  for (const [n, check] of valid.entries())
    for (const [field, metric] of Object.entries(check)) {
      const i = validAt[n] as number
      if (field === 'kind' || typeof metric !== 'string') continue
      const kind = check.kind === 'mean' ? 'histogram' : 'counter'
      const seen = readAs.get(metric)
      if (seen === undefined) readAs.set(metric, { kind, at: i })
      else if (seen.kind !== kind)
        problem(`checks[${i}].${field}`, `${metric} is read as a ${seen.kind} by checks[${seen.at}]; a metric is one or the other`)
    }
  if (minSamples !== undefined && (!Number.isInteger(minSamples) || (minSamples as number) < 10 || (minSamples as number) > 1_000_000))
    problem('minSamples', 'must be a whole number from 10 to 1000000')
  if (alpha !== undefined && (!finite(alpha) || alpha < 0.001 || alpha > 0.2)) problem('alpha', 'must be a number from 0.001 to 0.2')
  if (action !== undefined && action !== 'rollback' && action !== 'pause') problem('action', 'must be rollback or pause')
  if (problems.length > 0) return { problems }
  return {
    guard: {
      checks: valid,
      ...(minSamples !== undefined ? { minSamples: minSamples as number } : {}),
      ...(alpha !== undefined ? { alpha: alpha as number } : {}),
      ...(action !== undefined ? { action: action as GuardAction } : {}),
    },
    problems,
  }
}
