/**
 * The application metrics guards read (docs/guarded-rollouts.md#the-applications-metrics): data
 * points of the metrics some guard names, reported over OTLP, kept per environment, flag, metric and
 * variant in 10-second buckets for 7 days, durable and added up across replicas.
 */

import type { MeanArm } from '../domain/guard-statistics.ts'

/** One data point a guard may read, as the OTLP transport decoded it (before any check of flag, variant or metric). */
export interface MetricPoint {
  metric: string
  kind: 'sum' | 'histogram'
  /** A digest of the resource, scope and point attributes (never their text). */
  series: string
  flag: string
  variant: string
  cumulative: boolean
  /** `startTimeUnixNano` as decimal text ('' when absent). */
  start: string
  /** `timeUnixNano` as decimal text ('' when absent). */
  time: string
  /** A sum's value. */
  value?: number
  /** A histogram's count, sum, explicit bounds and bucket counts. */
  count?: number
  sum?: number
  bounds?: number[]
  buckets?: number[]
}

/** What one variant of a flag reported for a metric over a span: a sum's increase or a histogram's summary. */
export type VariantTotals = { kind: 'sum'; increase: number } | ({ kind: 'histogram' } & MeanArm)

/** One step of the impact series. */
export type ImpactPoint = { at: string; increase: number } | { at: string; count: number; sum: number }

/** The metric keeping, as guards, the watcher and the impact route use it. */
export interface GuardMetrics {
  /**
   * Keeps the points `env` reports that feed a guard: of a metric a guard of that environment names,
   * of a flag the reporter sees, of one of that flag's variants; every other point is ignored and
   * leaves no trace. Answers the flags whose counts moved (the watcher checks their guards at once).
   */
  ingest(reporter: string, env: string, points: readonly MetricPoint[], canSee: (flag: string) => boolean): Set<string>
  /** Each variant's totals of `metric` for `flag` in `env` from `sinceMs` (inclusive, rounded down to its bucket) to now, every replica's. */
  totals(env: string, flag: string, metric: string, sinceMs: number): Map<string, VariantTotals>
  /** The per-variant series of `metric` for `flag` in `env` from `sinceMs`, in steps of `stepSeconds`. */
  series(
    env: string,
    flag: string,
    metric: string,
    sinceMs: number,
    stepSeconds: number,
  ): { kind: 'sum' | 'histogram'; series: { variant: string; points: ImpactPoint[] }[] }
  /** Writes what is kept in memory to the store (a timer does it at least every 10 s; `stop` once more). */
  flush(): Promise<void>
  /** Stops the timers and flushes. */
  stop(): Promise<void>
}
