/**
 * How the guard metrics lay out what they count (docs/guarded-rollouts.md#the-applications-metrics):
 * a point's amounts as one array (a sum's increase; a histogram's count, sum and bucket counts), the
 * guard log's slot of each, and the answers built from them (totals, the impact series).
 */

import { COUNT_SLOT, HISTOGRAM_SUM_SLOT, SUM_SLOT } from '../storage/shared-tables.ts'
import type { ImpactPoint, MetricPoint, VariantTotals } from './guard-metrics.ts'

/** Amounts of one guarded metric of a flag, by variant and step (slots as `amountsOf` lays them out). */
export type Steps = Map<string, Map<number, number[]>>
/** The key of one guarded metric of a flag in an environment. */
export const keyOf = (env: string, flag: string, metric: string) => `${env}\u0000${flag}\u0000${metric}`
/** Adds `add` into `into`, position by position. */
export const addInto = (into: number[], add: readonly number[]) => {
  for (let i = 0; i < add.length; i++) into[i] = (into[i] ?? 0) + (add[i] as number)
}
/** A point's amounts: a sum's value; a histogram's count, sum and bucket counts. */
export const amountsOf = (p: MetricPoint): number[] =>
  p.kind === 'sum' ? [p.value ?? 0] : [p.count ?? 0, p.sum ?? 0, ...(p.buckets ?? [])]
/** The log's slot of each position of an amounts array. */
export const slotOf = (kind: 'sum' | 'histogram', i: number) =>
  kind === 'sum' ? SUM_SLOT : i === 0 ? COUNT_SLOT : i === 1 ? HISTOGRAM_SUM_SLOT : i - 2
/** The position in an amounts array of a log slot. */
export const positionOf = (kind: 'sum' | 'histogram', slot: number) =>
  kind === 'sum' ? 0 : slot === COUNT_SLOT ? 0 : slot === HISTOGRAM_SUM_SLOT ? 1 : slot + 2
/** True when two histograms' explicit bounds are the same. */
export const sameBounds = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((v, i) => v === b[i])

/** A variant's totals from its amounts; a histogram's buckets only when they fit the bounds kept. */
export function totalsOf(kind: 'sum' | 'histogram', v: readonly number[], kept: readonly number[]): VariantTotals {
  if (kind === 'sum') return { kind: 'sum', increase: v[0] ?? 0 }
  const buckets = v.slice(2)
  const fits = buckets.length === kept.length + 1
  return { kind: 'histogram', count: v[0] ?? 0, sum: v[1] ?? 0, bounds: fits ? kept : [], buckets: fits ? buckets : [] }
}

/** The impact series from the log's rows (and unwritten ones) by variant and step: variants in name order, steps in time order. */
export function impactSeriesOf(
  kind: 'sum' | 'histogram',
  rows: readonly { variant: string; slot: number; atMs: number; value: number }[],
): { variant: string; points: ImpactPoint[] }[] {
  const byVariant = new Map<string, Map<number, number[]>>()
  for (const row of rows) {
    let steps = byVariant.get(row.variant)
    if (steps === undefined) byVariant.set(row.variant, (steps = new Map()))
    let into = steps.get(row.atMs)
    if (into === undefined) steps.set(row.atMs, (into = [0, 0]))
    const at = positionOf(kind, row.slot)
    into[at] = (into[at] ?? 0) + row.value
  }
  const series = [...byVariant]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([variant, steps]) => ({
      variant,
      points: [...steps]
        .sort(([a], [b]) => a - b)
        .map(([atMs, v]): ImpactPoint => {
          const at = new Date(atMs).toISOString()
          return kind === 'sum' ? { at, increase: v[0] ?? 0 } : { at, count: v[0] ?? 0, sum: v[1] ?? 0 }
        }),
    }))
  return series
}
