/**
 * OTLP/HTTP metrics as OpenTelemetry's exporters send them (docs/openfeature.md#in-process-usage):
 * `ExportMetricsServiceRequest` in protobuf or JSON, decoded through protobufjs with the part of
 * the schema flagd reads (`otlp-metrics.proto`). Out come the data points of the counter that
 * OpenFeature's `MetricsHook` keeps, `feature_flag.evaluation_success_total`, each with the series
 * it belongs to (resource, scope and point attributes), and the points of every monotonic Sum and
 * Histogram labelled with a flag and its variant, which guards may read
 * (docs/guarded-rollouts.md#the-applications-metrics); every other point is ignored. A series is
 * named by a SHA-256 digest of those attributes, never by their text: a request's attributes may
 * be megabytes, and what is kept of a series must not be.
 */

import protobuf from 'protobufjs'
import { type JsonProblem, MAX_JSON_DEPTH, readBoundedJson } from '../domain/bounded-json.ts'
import type { MetricPoint } from '../services/guard-metrics.ts'
import type { ReportedPoint } from '../services/in-process-usage.ts'
import { flagVariantOf, type HistogramPoint, histogramPoint, type NumberPoint, sumPoint } from './otlp-guard-points.ts'
import protoText from './otlp-metrics.proto' with { type: 'text' }

const root = protobuf.parse(protoText, { keepCase: false }).root
root.resolveAll()
/** The request message (the bench builds requests with it). */
export const OtlpRequest = root.lookupType('opentelemetry.proto.ExportMetricsServiceRequest')
const Request = OtlpRequest
const Response = root.lookupType('opentelemetry.proto.ExportMetricsServiceResponse')

/** The counter flagd counts. */
export const EVALUATION_COUNTER = 'feature_flag.evaluation_success_total'

type KeyValue = { key?: string; value?: Record<string, unknown> }
type Point = NumberPoint & { attributes?: KeyValue[] }
type Metric = {
  name?: string
  sum?: { dataPoints?: Point[]; aggregationTemporality?: number; isMonotonic?: boolean }
  histogram?: { dataPoints?: (HistogramPoint & { attributes?: KeyValue[] })[]; aggregationTemporality?: number }
}
type Decoded = {
  resourceMetrics?: {
    resource?: { attributes?: KeyValue[] }
    scopeMetrics?: { scope?: { name?: string; version?: string }; metrics?: Metric[] }[]
  }[]
}

/** What a request holds for flagd: evaluation counts, points guards may read, and how many points were malformed. */
export interface DecodedMetrics {
  points: ReportedPoint[]
  metrics: MetricPoint[]
  rejected: number
}

const text = (v: Record<string, unknown> | undefined): string | undefined => {
  if (!v) return undefined
  for (const key of ['stringValue', 'boolValue', 'intValue', 'doubleValue']) if (v[key] !== undefined) return String(v[key])
  return undefined
}
const attributes = (kvs: KeyValue[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key ?? '', text(kv.value) ?? '']))
// one update of the joined text: a thousand points a request, and node:crypto's hash with an update
// per part cost several times Bun's (docs/performance.md#the-metrics-guards-read)
const digest = (...parts: string[]) => new Bun.CryptoHasher('sha256').update(`${parts.join('\u0000')}\u0000`).digest('base64')

const JSON_PROBLEMS: Record<JsonProblem, string> = {
  'too-deep': `nested deeper than ${MAX_JSON_DEPTH} levels`,
  'not-utf8': 'not valid UTF-8',
  empty: 'an empty body',
  'not-json': 'not valid JSON',
}

/** The JSON of an OTLP body, refused past the depth of every JSON body before it is built (docs/api.md#conventions). */
function parsedJson(body: Uint8Array): unknown {
  const read = readBoundedJson(body)
  if (read.ok) return read.value
  throw new Error(JSON_PROBLEMS[read.problem])
}

/** Decodes a request body; `rejected` counts the points that are malformed. */
export function decodeOtlpMetrics(body: Uint8Array, json: boolean): DecodedMetrics {
  let decoded: Decoded
  try {
    const message = json ? Request.fromObject(parsedJson(body) as Record<string, unknown>) : Request.decode(body)
    decoded = Request.toObject(message, { longs: String, enums: Number }) as Decoded
  } catch (err) {
    throw new Error(`not an OTLP metrics request: ${(err as Error).message}`)
  }
  const out: DecodedMetrics = { points: [], metrics: [], rejected: 0 }
  for (const rm of decoded.resourceMetrics ?? []) {
    // the resource is digested once, whatever the number of its points
    let resource: string | undefined
    const resourceDigest = () => (resource ??= digest(JSON.stringify(attributes(rm.resource?.attributes))))
    for (const sm of rm.scopeMetrics ?? []) {
      let scope: string | undefined
      const scopeDigest = () => (scope ??= digest(sm.scope?.name ?? '', sm.scope?.version ?? ''))
      for (const metric of sm.metrics ?? []) {
        if (metric.name === EVALUATION_COUNTER && metric.sum) evaluationPoints(metric, out, resourceDigest, scopeDigest)
        else guardPoints(metric, out, resourceDigest, scopeDigest)
      }
    }
  }
  return out
}

/** The evaluation counter's points, for in-process usage (docs/openfeature.md#in-process-usage). */
function evaluationPoints(metric: Metric, out: DecodedMetrics, resource: () => string, scope: () => string): void {
  const cumulative = metric.sum?.aggregationTemporality === 2
  for (const point of metric.sum?.dataPoints ?? []) {
    const attrs = attributes(point.attributes)
    // proto3 leaves a zero out: a point with neither field is 0 (a counter that restarted)
    const value = point.asInt !== undefined ? Number(point.asInt) : (point.asDouble ?? 0)
    const flag = attrs['feature_flag.key']
    // an evaluation counter counts whole evaluations: a fraction or a negative number is malformed
    if (!flag || !Number.isSafeInteger(value) || value < 0) {
      out.rejected++
      continue
    }
    out.points.push({
      series: digest(resource(), scope(), JSON.stringify(attrs)),
      flag,
      variant: attrs['feature_flag.result.variant'] ?? attrs['feature_flag.variant'] ?? '',
      reason: attrs['feature_flag.result.reason'] ?? attrs['feature_flag.reason'] ?? '',
      value,
      cumulative,
      start: String(point.startTimeUnixNano ?? ''),
    })
  }
}

/** The points of a monotonic Sum or a Histogram that name a flag and a variant, for guards. */
function guardPoints(metric: Metric, out: DecodedMetrics, resource: () => string, scope: () => string): void {
  const name = metric.name ?? ''
  if (name === '') return
  const keep = (
    point: { attributes?: KeyValue[] },
    cumulative: boolean,
    make: (base: Parameters<typeof sumPoint>[0]) => MetricPoint | 'malformed',
  ) => {
    const attrs = attributes(point.attributes)
    const named = flagVariantOf(attrs)
    if (named === undefined) return
    const made = make({ metric: name, series: digest(resource(), scope(), name, JSON.stringify(attrs)), cumulative, ...named })
    if (made === 'malformed') out.rejected++
    else out.metrics.push(made)
  }
  // a Sum that may go down (an up-down counter) is no count of events: no guard reads it
  if (metric.sum?.isMonotonic) {
    const cumulative = metric.sum.aggregationTemporality === 2
    for (const point of metric.sum.dataPoints ?? []) keep(point, cumulative, (base) => sumPoint(base, point))
  }
  if (metric.histogram) {
    const cumulative = metric.histogram.aggregationTemporality === 2
    for (const point of metric.histogram.dataPoints ?? []) keep(point, cumulative, (base) => histogramPoint(base, point))
  }
}

/** The answer an OTLP collector gives: partial success with the rejected points, in the request's encoding. */
export function encodeOtlpResponse(rejected: number, json: boolean): Uint8Array | string {
  const body = rejected > 0 ? { partialSuccess: { rejectedDataPoints: rejected, errorMessage: 'malformed data points' } } : {}
  return json ? JSON.stringify(body) : Response.encode(Response.fromObject(body)).finish()
}
