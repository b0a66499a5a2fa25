/**
 * What a GO Feature Flag rule serves, in flagd's terms (docs/migrations.md#from-go-feature-flag): a
 * variation by name, a `percentage` split as a `fractional` with the tool's bucket sizes (per
 * 100,000, cut as the tool cuts them), a `progressiveRollout` as a flagd rollout.
 */

import { isJsonObject } from '../json-object.ts'
import type { Rollout } from '../rollout.ts'

/** The tool's buckets per percent. */
const PER_PERCENT = 1000

/** A rule's answer in flagd's rule language (a variant name or a split), or why it cannot be kept. */
export type Outcome = { result: unknown; split: boolean } | { problem: string }

/** What serves a rule: `variation`, or a `percentage` split by the bucketing key (`by`: its attribute, else `targetingKey`). */
export function ruleOutcome(rule: Record<string, unknown>, variations: Record<string, unknown>, by: string | undefined): Outcome {
  if (rule.percentage !== undefined && rule.percentage !== null) return split(rule.percentage, variations, by)
  const v = rule.variation
  if (v === undefined || v === null)
    return { problem: 'has no variation, percentage or progressiveRollout (GO Feature Flag answers an error)' }
  if (typeof v !== 'string' || !(v in variations)) return { problem: `serves variation ${JSON.stringify(v)}, which the flag does not have` }
  return { result: v, split: false }
}

function split(raw: unknown, variations: Record<string, unknown>, by: string | undefined): Outcome {
  if (!isJsonObject(raw) || Object.keys(raw).length === 0) return { problem: 'percentage must map variations to percents' }
  for (const [name, p] of Object.entries(raw)) {
    if (!(name in variations)) return { problem: `percentage names variation ${JSON.stringify(name)}, which the flag does not have` }
    if (typeof p !== 'number' || !Number.isFinite(p) || p < 0) return { problem: `percentage of ${name} must be a number from 0` }
  }
  // the tool's buckets: variations in reverse order of name, each from where the last ended, cut to whole buckets
  const names = Object.keys(raw).sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))
  const weights: [string, number][] = []
  let end = 0
  let sum = 0
  for (const name of names) {
    const start = end
    end = start + (raw[name] as number) * PER_PERCENT
    sum += raw[name] as number
    weights.push([name, Math.trunc(end) - Math.trunc(start)])
  }
  const total = weights.reduce((n, [, w]) => n + w, 0)
  if (total === 0) return { problem: 'percentages add up to 0 (GO Feature Flag refuses the flag)' }
  if (total !== Math.trunc(sum * PER_PERCENT))
    return { problem: 'percentages leave some of the tool’s buckets to no variation (GO Feature Flag answers an error there)' }
  const served = weights.filter(([, w]) => w > 0)
  if (served.length === 1) return { result: (served[0] as [string, number])[0], split: false }
  const key = by === undefined ? [] : [{ cat: [{ var: '$flagd.flagKey' }, { var: by }] }]
  return { result: { fractional: [...key, ...weights] }, split: true }
}

/**
 * A `progressiveRollout` as a flagd rollout (`initial` answers until the share of `end` rises from
 * the initial to the end percentage between the two dates), or why it cannot be one. The tool
 * serves `initial` to every context before the start, so an initial percentage above 0 is exact only
 * once the start has passed (`nowMs`).
 */
export function progressiveRollout(
  raw: unknown,
  variations: Record<string, unknown>,
  by: string | undefined,
  nowMs: number,
): { rollout: Rollout; initial: string } | { constant: string } | { problem: string } {
  if (!isJsonObject(raw) || !isJsonObject(raw.initial) || !isJsonObject(raw.end))
    return { problem: 'progressiveRollout needs initial and end' }
  const { initial, end } = raw
  const variation = (step: Record<string, unknown>) =>
    typeof step.variation === 'string' && step.variation in variations ? step.variation : undefined
  const from = variation(initial)
  const to = variation(end)
  if (from === undefined || to === undefined) return { problem: 'progressiveRollout names a variation the flag does not have' }
  const start = dateOf(initial.date)
  const stop = dateOf(end.date)
  if (start === undefined || stop === undefined || stop <= start)
    return { problem: 'progressiveRollout needs an initial date before its end date (GO Feature Flag answers an error)' }
  const p0 = percent(initial.percentage)
  const written = percent(end.percentage)
  if (p0 === undefined || written === undefined) return { problem: 'progressiveRollout percentages must be numbers from 0' }
  if (written < p0) return { problem: 'progressiveRollout ends below where it starts (GO Feature Flag refuses the flag)' }
  // an end percentage of 0 (or none) or above 100 is 100 to the tool
  const p1 = written === 0 || written > 100 ? 100 : written
  if (from === to) return { constant: from }
  if (p0 > 0 && start > nowMs)
    return {
      problem: `progressiveRollout starts at ${p0} % on ${new Date(start).toISOString()}, and GO Feature Flag serves ${from} to every context until then: a flagd rollout serves its start share from now`,
    }
  const rollout: Rollout = {
    variant: to,
    start: new Date(start).toISOString(),
    end: new Date(stop).toISOString(),
    fromPercent: p0,
    toPercent: p1,
    ...(by === undefined ? {} : { by }),
  }
  return { rollout, initial: from }
}

/** A date of the file (RFC 3339 text, or a date a YAML or TOML reader made) in ms, or `undefined`. */
export function dateOf(raw: unknown): number | undefined {
  if (raw instanceof Date) return Number.isNaN(raw.getTime()) ? undefined : raw.getTime()
  if (typeof raw !== 'string') return undefined
  const ms = Date.parse(raw)
  return Number.isNaN(ms) || !/(Z|[+-]\d\d:?\d\d)$/iu.test(raw.trim()) ? undefined : ms
}

function percent(raw: unknown): number | undefined {
  if (raw === undefined || raw === null) return 0
  return typeof raw === 'number' && Number.isFinite(raw) && raw >= 0 ? raw : undefined
}
