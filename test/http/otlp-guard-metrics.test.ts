/**
 * The metrics guards read, over HTTP with the real OpenTelemetry SDK
 * (docs/guarded-rollouts.md#the-applications-metrics): an application labels its own counter and
 * histogram with the flag and the variant it was answered, exports them over OTLP/HTTP (protobuf and
 * JSON), and the guard's counts move by the increase of each report; they survive a restart, and
 * `GET /api/flags/{name}/impact` draws them per variant (docs/api.md#impact).
 */

import { afterEach, expect, test } from 'bun:test'
import { metrics } from '@opentelemetry/api'
import { OTLPMetricExporter as JsonExporter } from '@opentelemetry/exporter-metrics-otlp-http'
import { OTLPMetricExporter as ProtoExporter } from '@opentelemetry/exporter-metrics-otlp-proto'
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { setGuardedRollout } from '../helpers/guarded-flag.ts'
import { serveApp } from '../helpers/served-app.ts'
import { START } from '../helpers/temp-services.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let apps: TestApp[] = []
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
  for (const a of apps) await a.close()
  apps = []
})

const at = START
const now = () => new Date(at)
const WRITTEN = START - 60_000
const FLAG = 'shop/checkout'

async function daemon(a?: TestApp) {
  const app = a ?? (await createTestApp({}, { now }))
  apps.push(app)
  const served = serveApp(app)
  cleanups.push(() => served.stop())
  return { a: app, base: served.base }
}

/** The application: its own counters and histogram, labelled with the flag's answer, exported to `base`. */
function application(base: string, token: string, json: boolean) {
  const Exporter = json ? JsonExporter : ProtoExporter
  const exporter = new Exporter({ url: `${base}/v1/metrics`, headers: { authorization: `Bearer ${token}` } })
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
  const provider = new MeterProvider({ readers: [reader] })
  cleanups.push(() => provider.shutdown())
  const meter = provider.getMeter('shop')
  const errors = meter.createCounter('app.errors')
  const requests = meter.createCounter('app.requests')
  const latency = meter.createHistogram('app.latency', { advice: { explicitBucketBoundaries: [0.1, 0.5, 1] } })
  const serve = (variant: string, seconds: number, failed: boolean) => {
    const labels = { 'feature_flag.key': FLAG, 'feature_flag.result.variant': variant, 'http.route': '/checkout' }
    requests.add(1, labels)
    if (failed) errors.add(1, labels)
    latency.record(seconds, labels)
  }
  return { reader, serve }
}

async function guarded() {
  const { a, base } = await daemon()
  expect((await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: FLAG, type: 'BOOLEAN', value: false } })).status).toBe(201)
  await setGuardedRollout(a.app.store, FLAG, 'development', { writtenAt: new Date(WRITTEN).toISOString() })
  const token = (await a.req('POST', '/api/tokens', { token: a.adminToken, body: { name: 'shop', permissions: ['flag:evaluate'] } })).body
    .token as string
  return { a, base, token }
}

const totals = (a: TestApp, metric: string) =>
  Object.fromEntries([...a.app.services.guardMetrics.totals('development', FLAG, metric, WRITTEN)].map(([v, t]) => [v, t]))

for (const json of [false, true])
  test(`${json ? 'JSON' : 'protobuf'}: a counter and a histogram labelled with the flag's variant feed its guard, by their increase`, async () => {
    metrics.disable()
    const { a, base, token } = await guarded()
    const app = application(base, token, json)
    for (let i = 0; i < 10; i++) app.serve('true', 0.3, i < 4)
    for (let i = 0; i < 10; i++) app.serve('false', 0.05, i < 1)
    app.serve('made-up', 0.05, true) // not a variant of the flag: ignored
    await app.reader.forceFlush()
    expect(totals(a, 'app.errors')).toEqual({ true: { kind: 'sum', increase: 4 }, false: { kind: 'sum', increase: 1 } })
    expect(totals(a, 'app.requests')).toEqual({ true: { kind: 'sum', increase: 10 }, false: { kind: 'sum', increase: 10 } })
    expect(totals(a, 'app.latency').true).toMatchObject({ kind: 'histogram', count: 10, bounds: [0.1, 0.5, 1], buckets: [0, 10, 0, 0] })
    // the same cumulative series again: only what was added since
    app.serve('true', 2, true)
    await app.reader.forceFlush()
    await app.reader.forceFlush()
    expect(totals(a, 'app.errors').true).toEqual({ kind: 'sum', increase: 5 })
    expect(totals(a, 'app.latency').true).toMatchObject({ count: 11, buckets: [0, 10, 0, 1] })
  })

test('counts survive a restart, and the impact series draws them per variant', async () => {
  metrics.disable()
  const { a, base, token } = await guarded()
  const app = application(base, token, false)
  for (let i = 0; i < 6; i++) app.serve('true', 0.3, i < 3)
  app.serve('false', 0.05, true)
  await app.reader.forceFlush()
  const restarted = await a.restart()
  apps = apps.filter((x) => x !== a)
  apps.push(restarted)
  await restarted.app.services.guardMetrics.refresh()
  expect(totals(restarted, 'app.errors')).toEqual({ true: { kind: 'sum', increase: 3 }, false: { kind: 'sum', increase: 1 } })

  const impact = (query: string, token = restarted.adminToken) => restarted.req('GET', `/api/flags/${FLAG}/impact?${query}`, { token })
  const step = START - (START % 60_000)
  const sums = await impact('metric=app.errors')
  expect(sums.status).toBe(200)
  expect(sums.body).toEqual({
    metric: 'app.errors',
    kind: 'sum',
    step: 60,
    series: [
      { variant: 'false', points: [{ at: new Date(step).toISOString(), increase: 1 }] },
      { variant: 'true', points: [{ at: new Date(step).toISOString(), increase: 3 }] },
    ],
  })
  const latency = await impact('metric=app.latency&step=3600&environment=development')
  expect(latency.status).toBe(200)
  expect(latency.body.kind).toBe('histogram')
  expect(latency.body.series[1]).toMatchObject({ variant: 'true', points: [{ count: 6 }] })
  expect(latency.body.series[1].points[0].sum).toBeCloseTo(1.8)

  // a metric no guard of the flag names, an unknown flag: 404; bad parameters: 400 naming them
  expect((await impact('metric=app.unguarded')).status).toBe(404)
  expect((await restarted.req('GET', '/api/flags/shop/nothing/impact?metric=app.errors', { token: restarted.adminToken })).status).toBe(404)
  for (const [query, field] of [
    ['metric=app.errors&step=5', 'step'],
    ['metric=app.errors&step=3601', 'step'],
    ['metric=app.errors&step=abc', 'step'],
    ['metric=app.errors&since=yesterday', 'since'],
    [`metric=app.errors&since=${new Date(START - 8 * 86_400_000).toISOString()}`, 'since'],
    ['step=60', 'metric'],
  ] as const) {
    const refused = await impact(query)
    expect(refused.status).toBe(400)
    expect(JSON.stringify(refused.body)).toContain(field)
  }
  // flag:read is needed
  const outsider = await restarted.userWith(['user:read'])
  expect((await impact('metric=app.errors', outsider.token)).status).toBe(403)
})

test("a report with another environment's token, or of a flag outside the token's prefixes, never feeds the guard", async () => {
  metrics.disable()
  const { a, base } = await guarded()
  expect((await a.req('PUT', '/api/environments/staging', { token: a.adminToken, body: {} })).status).toBe(201)
  const staging = (
    await a.req('POST', '/api/tokens', { token: a.adminToken, body: { name: 's', permissions: ['flag:evaluate'], environment: 'staging' } })
  ).body.token as string
  const narrow = (
    await a.req('POST', '/api/tokens', {
      token: a.adminToken,
      body: { name: 'n', permissions: ['flag:evaluate'], flagPrefixes: ['other/'] },
    })
  ).body.token as string
  for (const token of [staging, narrow]) {
    const app = application(base, token, true)
    app.serve('true', 0.3, true)
    await app.reader.forceFlush()
  }
  expect(totals(a, 'app.errors')).toEqual({})
  // staging was made as a copy, guard included: the staging token's report is staging's alone (its
  // three metrics, one variant each); the narrow token's left nothing
  const staged = a.app.services.guardMetrics.totals('staging', FLAG, 'app.errors', WRITTEN)
  expect(Object.fromEntries(staged)).toEqual({ true: { kind: 'sum', increase: 1 } })
  expect(a.app.services.guardMetrics.stored().cells).toBe(3)
})

test('a histogram point with other bounds than the first kept, or a malformed one, is counted in partialSuccess', async () => {
  const { a, token } = await guarded()
  const kv = (key: string, value: string) => ({ key, value: { stringValue: value } })
  const point = (bounds: number[], buckets: string[], count: string) => ({
    attributes: [kv('feature_flag.key', FLAG), kv('feature_flag.result.variant', 'true')],
    count,
    sum: 1,
    explicitBounds: bounds,
    bucketCounts: buckets,
  })
  const report = (points: unknown[]) =>
    a.req('POST', '/v1/metrics', {
      token,
      headers: { 'content-type': 'application/json' },
      rawBody: JSON.stringify({
        resourceMetrics: [
          { scopeMetrics: [{ metrics: [{ name: 'app.latency', histogram: { aggregationTemporality: 1, dataPoints: points } }] }] },
        ],
      }),
    })
  const first = await report([point([1], ['1', '1'], '2')])
  expect(first.status).toBe(200)
  expect(first.body).toEqual({})
  const refused = await report([point([2], ['1', '1'], '2'), point([1], ['1', '1'], '3')])
  expect(refused.status).toBe(200)
  expect(refused.body).toMatchObject({ partialSuccess: { rejectedDataPoints: 2 } })
  expect(totals(a, 'app.latency')).toEqual({ true: { kind: 'histogram', count: 2, sum: 1, bounds: [1], buckets: [1, 1] } })
})

test('a gzip body (an OpenTelemetry Collector exports so by default) is inflated up to the limit; a bomb is 413, another coding 415', async () => {
  const { a, token } = await guarded()
  const kv = (key: string, value: string) => ({ key, value: { stringValue: value } })
  const request = JSON.stringify({
    resourceMetrics: [
      {
        scopeMetrics: [
          {
            metrics: [
              {
                name: 'app.errors',
                sum: {
                  isMonotonic: true,
                  aggregationTemporality: 1,
                  dataPoints: [{ attributes: [kv('feature_flag.key', FLAG), kv('feature_flag.result.variant', 'true')], asInt: '4' }],
                },
              },
            ],
          },
        ],
      },
    ],
  })
  const send = (rawBody: Uint8Array, encoding: string) =>
    a.req('POST', '/v1/metrics', { token, headers: { 'content-type': 'application/json', 'content-encoding': encoding }, rawBody })
  const sent = await send(Bun.gzipSync(new TextEncoder().encode(request)), 'gzip')
  expect(sent.status).toBe(200)
  expect(sent.body).toEqual({})
  expect(totals(a, 'app.errors')).toEqual({ true: { kind: 'sum', increase: 4 } })
  // 64 MiB of spaces in a few kilobytes: refused once 4 MiB are inflated
  const bomb = await send(Bun.gzipSync(new Uint8Array(64 * 2 ** 20).fill(32)), 'gzip')
  expect(bomb.status).toBe(413)
  expect((await send(Bun.gzipSync(new TextEncoder().encode('{')).subarray(0, 8), 'gzip')).status).toBe(400)
  expect((await send(new TextEncoder().encode(request), 'br')).status).toBe(415)
  expect(totals(a, 'app.errors')).toEqual({ true: { kind: 'sum', increase: 4 } })
})
