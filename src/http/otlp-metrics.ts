/**
 * OTLP/HTTP metrics as OpenTelemetry's exporters send them (docs/openfeature.md#in-process-usage):
 * `ExportMetricsServiceRequest` in protobuf or JSON, decoded through protobufjs with the part of
 * the schema flagd reads (`otlp-metrics.proto`). Out come the data points of the counter that
 * OpenFeature's `MetricsHook` keeps, `feature_flag.evaluation_success_total`, each with the series
 * it belongs to (resource, scope and point attributes); every other metric is ignored. A series is
 * named by a SHA-256 digest of those attributes, never by their text: a request's attributes may
 * be megabytes, and what is kept of a series must not be.
 */

import { createHash } from 'node:crypto'
import protobuf from 'protobufjs'
import { type JsonProblem, MAX_JSON_DEPTH, readBoundedJson } from '../domain/bounded-json.ts'
import type { ReportedPoint } from '../services/in-process-usage.ts'
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
type Point = { attributes?: KeyValue[]; startTimeUnixNano?: unknown; asDouble?: number; asInt?: unknown }
type Decoded = {
  resourceMetrics?: {
    resource?: { attributes?: KeyValue[] }
    scopeMetrics?: {
      scope?: { name?: string; version?: string }
      metrics?: { name?: string; sum?: { dataPoints?: Point[]; aggregationTemporality?: number } }[]
    }[]
  }[]
}

const text = (v: Record<string, unknown> | undefined): string | undefined => {
  if (!v) return undefined
  for (const key of ['stringValue', 'boolValue', 'intValue', 'doubleValue']) if (v[key] !== undefined) return String(v[key])
  return undefined
}
const attributes = (kvs: KeyValue[] | undefined) => Object.fromEntries((kvs ?? []).map((kv) => [kv.key ?? '', text(kv.value) ?? '']))
const digest = (...parts: string[]) => {
  const hash = createHash('sha256')
  for (const part of parts) hash.update(part).update('\u0000')
  return hash.digest('base64')
}

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

/** Decodes a request body; `rejected` counts the counter's points that are malformed. */
export function decodeOtlpMetrics(body: Uint8Array, json: boolean): { points: ReportedPoint[]; rejected: number } {
  let decoded: Decoded
  try {
    const message = json ? Request.fromObject(parsedJson(body) as Record<string, unknown>) : Request.decode(body)
    decoded = Request.toObject(message, { longs: String, enums: Number }) as Decoded
  } catch (err) {
    throw new Error(`not an OTLP metrics request: ${(err as Error).message}`)
  }
  const points: ReportedPoint[] = []
  let rejected = 0
  for (const rm of decoded.resourceMetrics ?? []) {
    // the resource is digested once, whatever the number of its points
    let resource: string | undefined
    for (const sm of rm.scopeMetrics ?? []) {
      let scope: string | undefined
      for (const metric of sm.metrics ?? []) {
        if (metric.name !== EVALUATION_COUNTER || !metric.sum) continue
        const cumulative = metric.sum.aggregationTemporality === 2
        for (const point of metric.sum.dataPoints ?? []) {
          const attrs = attributes(point.attributes)
          // proto3 leaves a zero out: a point with neither field is 0 (a counter that restarted)
          const value = point.asInt !== undefined ? Number(point.asInt) : (point.asDouble ?? 0)
          const flag = attrs['feature_flag.key']
          // an evaluation counter counts whole evaluations: a fraction or a negative number is malformed
          if (!flag || !Number.isSafeInteger(value) || value < 0) {
            rejected++
            continue
          }
          resource ??= digest(JSON.stringify(attributes(rm.resource?.attributes)))
          scope ??= digest(sm.scope?.name ?? '', sm.scope?.version ?? '')
          points.push({
            series: digest(resource, scope, JSON.stringify(attrs)),
            flag,
            variant: attrs['feature_flag.result.variant'] ?? attrs['feature_flag.variant'] ?? '',
            reason: attrs['feature_flag.result.reason'] ?? attrs['feature_flag.reason'] ?? '',
            value,
            cumulative,
            start: String(point.startTimeUnixNano ?? ''),
          })
        }
      }
    }
  }
  return { points, rejected }
}

/** The answer an OTLP collector gives: partial success with the rejected points, in the request's encoding. */
export function encodeOtlpResponse(rejected: number, json: boolean): Uint8Array | string {
  const body = rejected > 0 ? { partialSuccess: { rejectedDataPoints: rejected, errorMessage: 'malformed feature_flag data points' } } : {}
  return json ? JSON.stringify(body) : Response.encode(Response.fromObject(body)).finish()
}
