/**
 * docs/guarded-rollouts.md#the-applications-metrics: decoding the points guards may read, of any
 * metric name, in protobuf and JSON: monotonic Sums and Histograms labelled with a flag and a
 * variant; malformed ones are counted as rejected and never returned; the evaluation counter keeps
 * its path.
 */

import { expect, test } from 'bun:test'
import { decodeOtlpMetrics, OtlpRequest } from '../../src/http/otlp-metrics.ts'

const labels = (flag = 'shop/checkout', variant = 'new') => [
  { key: 'feature_flag.key', value: { stringValue: flag } },
  { key: 'feature_flag.result.variant', value: { stringValue: variant } },
]

const request = (metrics: Record<string, unknown>[]) => ({
  resourceMetrics: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'shop' } }] }, scopeMetrics: [{ metrics }] }],
})
const json = (metrics: Record<string, unknown>[]) => new TextEncoder().encode(JSON.stringify(request(metrics)))
const proto = (metrics: Record<string, unknown>[]) => OtlpRequest.encode(OtlpRequest.fromObject(request(metrics))).finish()

const counter = (points: Record<string, unknown>[], over: Record<string, unknown> = {}) => ({
  name: 'http.server.errors',
  sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: points, ...over },
})
const histogram = (points: Record<string, unknown>[]) => ({
  name: 'http.server.request.duration',
  histogram: { aggregationTemporality: 1, dataPoints: points },
})
const hpoint = (over: Record<string, unknown> = {}) => ({
  attributes: labels(),
  startTimeUnixNano: '100',
  timeUnixNano: '200',
  count: '6',
  sum: 1.5,
  explicitBounds: [0.1, 0.5],
  bucketCounts: ['1', '2', '3'],
  ...over,
})

for (const [encoding, encode, isJson] of [
  ['JSON', json, true],
  ['protobuf', proto, false],
] as const) {
  test(`${encoding}: a labelled counter and histogram of any name come out as points guards may read`, () => {
    const decoded = decodeOtlpMetrics(
      encode([counter([{ attributes: labels(), startTimeUnixNano: '100', timeUnixNano: '200', asInt: '7' }]), histogram([hpoint()])]),
      isJson,
    )
    expect(decoded.rejected).toBe(0)
    expect(decoded.points).toEqual([])
    expect(decoded.metrics).toHaveLength(2)
    const [sum, hist] = decoded.metrics
    expect(sum).toMatchObject({
      metric: 'http.server.errors',
      kind: 'sum',
      flag: 'shop/checkout',
      variant: 'new',
      cumulative: true,
      start: '100',
      time: '200',
      value: 7,
    })
    expect(hist).toMatchObject({
      metric: 'http.server.request.duration',
      kind: 'histogram',
      cumulative: false,
      count: 6,
      sum: 1.5,
      bounds: [0.1, 0.5],
      buckets: [1, 2, 3],
    })
    // a series is a digest, never the attributes' text, and differs by metric
    expect(sum?.series).not.toContain('shop')
    expect(sum?.series).not.toBe(hist?.series)
  })

  test(`${encoding}: malformed points are rejected and never returned`, () => {
    const decoded = decodeOtlpMetrics(
      encode([
        counter([
          { attributes: labels(), asDouble: -1 },
          { attributes: labels(), asDouble: 'NaN' }, // OTLP's JSON spells NaN and infinities as text
        ]),
        histogram([
          hpoint({ bucketCounts: ['1', '2'] }), // one bucket short of the bounds
          hpoint({ count: '7' }), // buckets do not add up to the count
          hpoint({ explicitBounds: [0.5, 0.1] }), // bounds not ascending
          hpoint({ sum: 'Infinity' }),
        ]),
      ]),
      isJson,
    )
    expect(decoded.metrics).toEqual([])
    expect(decoded.rejected).toBe(6)
  })
}

test("points without both labels, up-down counters and gauges are none of flagd's business: skipped, not rejected", () => {
  const decoded = decodeOtlpMetrics(
    json([
      counter([{ attributes: [{ key: 'feature_flag.key', value: { stringValue: 'f' } }], asInt: '3' }, { asInt: '3' }]),
      counter([{ attributes: labels(), asInt: '3' }], { isMonotonic: false }),
      { name: 'queue.depth', gauge: { dataPoints: [{ attributes: labels(), asInt: '3' }] } },
    ]),
    true,
  )
  expect(decoded).toEqual({ points: [], metrics: [], rejected: 0 })
})

test('feature_flag.variant names the variant when feature_flag.result.variant is absent; the evaluation counter keeps its path', () => {
  const decoded = decodeOtlpMetrics(
    json([
      counter([
        {
          attributes: [
            { key: 'feature_flag.key', value: { stringValue: 'f' } },
            { key: 'feature_flag.variant', value: { stringValue: 'b' } },
          ],
          asInt: '2',
        },
      ]),
      {
        name: 'feature_flag.evaluation_success_total',
        sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: [{ attributes: labels('f', 'on'), asInt: '4' }] },
      },
    ]),
    true,
  )
  expect(decoded.metrics.map((m) => [m.flag, m.variant, m.value])).toEqual([['f', 'b', 2]])
  expect(decoded.points.map((p) => [p.flag, p.variant, p.value])).toEqual([['f', 'on', 4]])
})

test('a histogram point with more bounds than flagd keeps is malformed', () => {
  const bounds = Array.from({ length: 300 }, (_, i) => i)
  const decoded = decodeOtlpMetrics(
    json([histogram([hpoint({ explicitBounds: bounds, bucketCounts: [...bounds.map(() => '0'), '6'] })])]),
    true,
  )
  expect(decoded).toMatchObject({ metrics: [], rejected: 1 })
})

test('a value no measurement reaches (past 1e100) is malformed: two of them would add up to Infinity and blind a guard', () => {
  const decoded = decodeOtlpMetrics(
    json([
      counter([{ attributes: labels(), asDouble: 1e308 }], { aggregationTemporality: 1 }),
      counter([{ attributes: labels(), asInt: '9007199254740991' }], { aggregationTemporality: 1 }),
      histogram([hpoint({ sum: 1e308 }), hpoint({ sum: -1e308 }), hpoint({ explicitBounds: [-1e308, 0.5] })]),
    ]),
    true,
  )
  expect(decoded.rejected).toBe(4)
  expect(decoded.metrics.map((m) => m.value)).toEqual([9007199254740991])
})
