/**
 * A check's arms over time (docs/ui.md#guarded-rollouts), from `GET /api/flags/{name}/impact`:
 * the new variant (treatment) against every other variant (control), cumulative at each step as
 * the guard counts them (errors/total, sum/count), or, for a threshold, the new variant's increase
 * over the check's sliding window.
 */

import type { GuardCheck } from '../../domain/rollout-guard.ts'

/** One point of an impact series: a counter's increase, or a histogram's count and sum. */
export type ImpactPoint = { at: string; increase: number } | { at: string; count: number; sum: number }

/** `GET /api/flags/{name}/impact`: per-variant series of one metric. */
export interface Impact {
  metric: string
  kind: 'sum' | 'histogram'
  step: number
  series: { variant: string; points: ImpactPoint[] }[]
}

/** One line of a chart: its values at the steps (`null` where there is nothing to divide by yet). */
export interface ArmLine {
  arm: 'treatment' | 'control'
  values: (number | null)[]
}

/** A check's chart: the steps' instants, a line per arm, and the limit a threshold draws. */
export interface CheckSeries {
  at: string[]
  lines: ArmLine[]
  limit: number | null
}

type Totals = { increase: number; count: number; sum: number }

/** Per arm and step: the metric's totals (the rollout's variant against the rest). */
function byArm(impact: Impact | undefined, variant: string, steps: string[]): Record<'treatment' | 'control', Totals[]> {
  const empty = () => steps.map(() => ({ increase: 0, count: 0, sum: 0 }))
  const out = { treatment: empty(), control: empty() }
  const index = new Map(steps.map((at, i) => [at, i]))
  for (const s of impact?.series ?? []) {
    const arm = s.variant === variant ? out.treatment : out.control
    for (const p of s.points) {
      const i = index.get(p.at)
      if (i === undefined) continue
      const slot = arm[i] as Totals
      if ('increase' in p) slot.increase += p.increase
      else {
        slot.count += p.count
        slot.sum += p.sum
      }
    }
  }
  return out
}

/** Every step that any series names, in time order. */
function stepsOf(...impacts: (Impact | undefined)[]): string[] {
  const all = new Set<string>()
  for (const m of impacts) for (const s of m?.series ?? []) for (const p of s.points) all.add(p.at)
  return [...all].sort((a, b) => Date.parse(a) - Date.parse(b))
}

/** A running total of `pick` over the steps. */
function running(totals: Totals[], pick: (t: Totals) => number): number[] {
  let acc = 0
  return totals.map((t) => {
    acc += pick(t)
    return acc
  })
}

/** The lines of `check` from the impact of each metric it names (`metrics[name]`), for rollout variant `variant`. */
export function checkSeries(check: GuardCheck, variant: string, metrics: Record<string, Impact | undefined>): CheckSeries {
  if (check.kind === 'error-rate') {
    const errors = metrics[check.errors]
    const total = metrics[check.total]
    const at = stepsOf(errors, total)
    const e = byArm(errors, variant, at)
    const t = byArm(total, variant, at)
    const line = (arm: 'treatment' | 'control'): ArmLine => {
      const num = running(e[arm], (x) => x.increase)
      const den = running(t[arm], (x) => x.increase)
      return { arm, values: den.map((d, i) => (d > 0 ? (num[i] as number) / d : null)) }
    }
    return { at, lines: [line('treatment'), line('control')], limit: null }
  }
  if (check.kind === 'mean') {
    const h = metrics[check.histogram]
    const at = stepsOf(h)
    const arms = byArm(h, variant, at)
    const line = (arm: 'treatment' | 'control'): ArmLine => {
      const sum = running(arms[arm], (x) => x.sum)
      const count = running(arms[arm], (x) => x.count)
      return { arm, values: count.map((c, i) => (c > 0 ? (sum[i] as number) / c : null)) }
    }
    return { at, lines: [line('treatment'), line('control')], limit: null }
  }
  const m = metrics[check.metric]
  const at = stepsOf(m)
  const treatment = byArm(m, variant, at).treatment
  const times = at.map((x) => Date.parse(x))
  // the increase over the window that ends at each step, as the check slides it
  const values = times.map((end, i) => {
    let acc = 0
    for (let j = i; j >= 0 && end - (times[j] as number) < check.windowSeconds * 1000; j--) acc += (treatment[j] as Totals).increase
    return acc
  })
  return { at, lines: [{ arm: 'treatment', values }], limit: check.max }
}

/** The metrics a chart of `check` reads. */
export function chartMetrics(check: GuardCheck): string[] {
  if (check.kind === 'error-rate') return [check.errors, check.total]
  return [check.kind === 'mean' ? check.histogram : check.metric]
}

/** A step (10–3,600 s) that draws `seconds` of history in about 60 points. */
export function stepFor(seconds: number): number {
  return Math.min(3600, Math.max(10, Math.ceil(seconds / 60 / 10) * 10))
}
