/**
 * The data points guards may read (docs/guarded-rollouts.md#the-applications-metrics), out of an
 * OTLP request as protobufjs decoded it: monotonic Sums and Histograms of any metric whose point
 * carries `feature_flag.key` and `feature_flag.result.variant` (or `feature_flag.variant`). A point
 * without both is none of flagd's business and is skipped; one with both whose numbers cannot be
 * (negative, not finite, bucket counts that do not fit the bounds or the count) is malformed, and
 * the caller answers it as rejected. Whether a guard wants the point is the service's to decide.
 */

import type { MetricPoint } from '../services/guard-metrics.ts'

/** The most explicit bounds a histogram point may carry (OpenTelemetry's default has 15). */
export const MAX_BOUNDS = 256

/** A number data point of a Sum as protobufjs answers it (longs as decimal text). */
export type NumberPoint = { startTimeUnixNano?: unknown; timeUnixNano?: unknown; asDouble?: number; asInt?: unknown }
/** A histogram data point as protobufjs answers it (longs as decimal text). */
export type HistogramPoint = {
  startTimeUnixNano?: unknown
  timeUnixNano?: unknown
  count?: unknown
  sum?: number
  bucketCounts?: unknown[]
  explicitBounds?: number[]
}

/** The flag and variant a point's attributes name, or undefined when it does not name both. */
export function flagVariantOf(attrs: Readonly<Record<string, string>>): { flag: string; variant: string } | undefined {
  const flag = attrs['feature_flag.key']
  const variant = attrs['feature_flag.result.variant'] ?? attrs['feature_flag.variant']
  if (!flag || !variant) return undefined
  return { flag, variant }
}

const whole = (v: unknown): number => (v === undefined || v === null ? 0 : Number(v))
const stamp = (v: unknown): string => (v === undefined || v === null ? '' : String(v))
/**
 * The largest magnitude a value, sum or bound may have: far past any measurement, and low enough
 * that no number of points adds up to Infinity or squares past it (a guard's statistics would read
 * NaN from then on, docs/guarded-rollouts.md#the-applications-metrics).
 */
export const MAX_MAGNITUDE = 1e100
const measurable = (n: number) => Number.isFinite(n) && Math.abs(n) <= MAX_MAGNITUDE
const countable = (n: number) => measurable(n) && n >= 0

/** The point of a monotonic Sum, or 'malformed'. */
export function sumPoint(
  base: Pick<MetricPoint, 'metric' | 'series' | 'flag' | 'variant' | 'cumulative'>,
  point: NumberPoint,
): MetricPoint | 'malformed' {
  // proto3 leaves a zero out: a point with neither field is 0 (a counter that restarted)
  const value = point.asInt !== undefined ? Number(point.asInt) : (point.asDouble ?? 0)
  if (!countable(value)) return 'malformed'
  return { ...base, kind: 'sum', start: stamp(point.startTimeUnixNano), time: stamp(point.timeUnixNano), value }
}

/** The point of a Histogram, or 'malformed'. */
export function histogramPoint(
  base: Pick<MetricPoint, 'metric' | 'series' | 'flag' | 'variant' | 'cumulative'>,
  point: HistogramPoint,
): MetricPoint | 'malformed' {
  const count = whole(point.count)
  const sum = point.sum ?? 0
  const bounds = point.explicitBounds ?? []
  const buckets = (point.bucketCounts ?? []).map(whole)
  if (!Number.isSafeInteger(count) || count < 0 || !measurable(sum) || bounds.length > MAX_BOUNDS) return 'malformed'
  // bounds strictly ascending and finite; bucket counts one more than the bounds, adding up to the count
  for (let i = 0; i < bounds.length; i++) {
    const b = bounds[i] as number
    if (!measurable(b) || (i > 0 && b <= (bounds[i - 1] as number))) return 'malformed'
  }
  if (buckets.length > 0 || bounds.length > 0) {
    if (buckets.length !== bounds.length + 1) return 'malformed'
    let total = 0
    for (const c of buckets) {
      if (!Number.isSafeInteger(c) || c < 0) return 'malformed'
      total += c
    }
    if (total !== count) return 'malformed'
  }
  return {
    ...base,
    kind: 'histogram',
    start: stamp(point.startTimeUnixNano),
    time: stamp(point.timeUnixNano),
    count,
    sum,
    bounds,
    buckets,
  }
}
