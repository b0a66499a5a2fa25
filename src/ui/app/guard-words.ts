/**
 * What a rollout's guard sees, in words (docs/ui.md#guarded-rollouts): each check of
 * `GET /api/flags/{name}/rollout` as one sentence, rates in % and points, means in the metric's
 * units, thresholds as "N in the last W", a check still collecting as "collecting: 120 of 200
 * samples", and the trip with its time.
 */

import type { Difference } from '../../domain/guard-statistics.ts'
import { GUARD_DEFAULTS, type Guard, type GuardCheck } from '../../domain/rollout-guard.ts'
import { localTime } from './local-time.ts'
import { haltInWords } from './rollout-words.ts'

/** The state of a rollout as `GET /api/flags/{name}/rollout` says it. */
export type RolloutStatus = 'pending' | 'running' | 'completed' | 'paused' | 'rolled-back'

/** One check as the rollout's reading shows it (arms by kind: rate, mean or increase). */
export interface CheckReading {
  kind: GuardCheck['kind']
  state: 'collecting' | 'healthy' | 'tripped'
  treatment: Record<string, number | null> | null
  control: Record<string, number | null> | null
  difference: Difference | null
}

/** `GET /api/flags/{name}/rollout`: where the rollout stands and what its guard sees. */
export interface RolloutReading {
  rollout: { variant: string; guard?: Guard; halted?: { at: string } } | null
  status: RolloutStatus
  percent: number
  guard: null | { checks: CheckReading[]; checkedAt: string | null; trippedAt: string | null }
}

/** A value in a metric's own units: three significant digits past the point at most ("0.212", "1,250"). */
export function inUnits(n: number): string {
  const abs = Math.abs(n)
  if (abs >= 100) return Math.round(n).toLocaleString('en')
  if (abs >= 1) return String(Number(n.toFixed(2)))
  return String(Number(n.toPrecision(3)))
}

/** A rate (0–1) as a percentage: "2.1 %". */
export const percentOf = (rate: number): string => `${(rate * 100).toFixed(1)} %`

/** A number's text with a true minus sign ("−0.4"), which screen readers say as "minus". */
const minus = (text: string): string => text.replace(/^-/, '−')

/** A signed number: "+1.1", "−0.4", "0.0". */
function signed(text: string, n: number): string {
  return n > 0 ? `+${text}` : minus(text)
}

/** A window in seconds, as people say it: "30 s", "5 min", "1 h 30 min", "1 day". */
export function windowInWords(seconds: number): string {
  if (seconds % 86_400 === 0) return seconds === 86_400 ? '1 day' : `${seconds / 86_400} days`
  if (seconds < 60 || seconds % 60 !== 0) return `${seconds} s`
  const h = Math.floor(seconds / 3600)
  const m = (seconds % 3600) / 60
  if (h === 0) return `${m} min`
  return m === 0 ? `${h} h` : `${h} h ${m} min`
}

/** The samples an arm has so far: the total of a rate, the count of a mean. */
function samples(arm: Record<string, number | null> | null): number {
  if (!arm) return 0
  return Number(arm.total ?? arm.count ?? 0)
}

/** The halt of the rollout in words: "rolled back at …", "paused at …". */
function haltWords(status: RolloutStatus, at: string, time: (iso: string) => string): string {
  return `${status === 'paused' ? 'paused' : 'rolled back'} at ${time(at)}`
}

/**
 * One check in a sentence: "errors 2.1 % with the new variant against 1.0 % without: +1.1 points
 * (0.6 to 1.6); rolled back at 10:42 UTC".
 */
export function checkInWords(
  check: GuardCheck,
  reading: CheckReading | undefined,
  rollout: Pick<RolloutReading, 'status' | 'guard'> & { minSamples?: number | undefined },
  time: (iso: string) => string = localTime,
): string {
  const minSamples = rollout.minSamples ?? GUARD_DEFAULTS.minSamples
  const name = check.kind === 'error-rate' ? check.errors : check.kind === 'mean' ? check.histogram : check.metric
  if (!reading) return `${name}: nothing reported yet`
  let text: string
  if (check.kind === 'threshold') {
    const increase = Number(reading.treatment?.increase ?? 0)
    text = `${name} ${inUnits(increase)} in the last ${windowInWords(check.windowSeconds)} with the new variant (at most ${inUnits(check.max)})`
  } else if (reading.state === 'collecting' || !reading.difference) {
    const have = Math.min(samples(reading.treatment), samples(reading.control))
    text = `${name}: collecting: ${Math.min(have, minSamples)} of ${minSamples} samples`
  } else if (check.kind === 'error-rate') {
    const t = Number(reading.treatment?.rate ?? 0)
    const c = Number(reading.control?.rate ?? 0)
    const d = reading.difference
    const points = (x: number) => minus((x * 100).toFixed(1))
    text =
      `${name} ${percentOf(t)} with the new variant against ${percentOf(c)} without: ` +
      `${signed(points(d.estimate), d.estimate)} points (${points(d.lower)} to ${points(d.upper)})`
  } else {
    const t = Number(reading.treatment?.mean ?? 0)
    const c = Number(reading.control?.mean ?? 0)
    const d = reading.difference
    text =
      `${name} mean ${inUnits(t)} with the new variant against ${inUnits(c)} without: ` +
      `${signed(inUnits(d.estimate), d.estimate)} (${minus(inUnits(d.lower))} to ${minus(inUnits(d.upper))})`
  }
  if (reading.state === 'tripped') {
    const at = rollout.guard?.trippedAt
    const halted = rollout.status === 'paused' || rollout.status === 'rolled-back'
    return at && halted ? `${text}; ${haltWords(rollout.status, at, time)}` : `${text}; tripped`
  }
  return reading.state === 'healthy' && check.kind !== 'threshold' ? `${text}; healthy` : text
}

/** Where a rollout its guard stopped stands, from its reading; `null` while it is not stopped. */
export function statusInWords(reading: RolloutReading, time: (iso: string) => string = localTime): string | null {
  if (reading.status !== 'rolled-back' && reading.status !== 'paused') return null
  const at = reading.guard?.trippedAt ?? reading.rollout?.halted?.at
  return haltInWords(reading.rollout?.variant ?? '', { status: reading.status, percent: reading.percent, at: at ?? undefined }, time)
}

/** What a guard does in a few words: "3 checks, at least 200 samples per arm, alpha 0.05, rolls back". */
export function guardSummary(guard: Guard): string {
  const n = guard.checks.length
  const action = (guard.action ?? GUARD_DEFAULTS.action) === 'pause' ? 'pauses' : 'rolls back'
  return `Guarded by ${n} ${n === 1 ? 'check' : 'checks'} (at least ${guard.minSamples ?? GUARD_DEFAULTS.minSamples} samples per arm, alpha ${guard.alpha ?? GUARD_DEFAULTS.alpha}); ${action} when one trips`
}
