/**
 * Usage from in-process evaluations (docs/openfeature.md#in-process-usage) with the real OpenTelemetry
 * SDK and OpenFeature's MetricsHook: an application evaluating with its own provider exports its
 * counters over OTLP/HTTP (protobuf and JSON) to /v1/metrics, and flag usage counts them per
 * variant, cumulative counters by their increase, never twice; other metrics are ignored.
 */

import { afterEach, expect, test } from 'bun:test'
import { MetricsHook } from '@openfeature/open-telemetry-hooks'
import { InMemoryProvider, OpenFeature } from '@openfeature/server-sdk'
import { metrics } from '@opentelemetry/api'
import { OTLPMetricExporter as JsonExporter } from '@opentelemetry/exporter-metrics-otlp-http'
import { OTLPMetricExporter as ProtoExporter } from '@opentelemetry/exporter-metrics-otlp-proto'
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { serveApp } from '../helpers/served-app.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let apps: TestApp[] = []
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
  for (const a of apps) await a.close()
  apps = []
})

async function setUp(json: boolean) {
  const a = await createTestApp({})
  apps.push(a)
  const served = serveApp(a)
  cleanups.push(() => served.stop())
  expect(
    (await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'local/dark', type: 'BOOLEAN', value: true } })).status,
  ).toBe(201)
  const token = (await a.req('POST', '/api/tokens', { token: a.adminToken, body: { name: 'app', permissions: ['flag:evaluate'] } })).body
    .token
  const Exporter = json ? JsonExporter : ProtoExporter
  const exporter = new Exporter({ url: `${served.base}/v1/metrics`, headers: { authorization: `Bearer ${token}` } })
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
  const provider = new MeterProvider({ readers: [reader] })
  metrics.disable()
  metrics.setGlobalMeterProvider(provider)
  cleanups.push(async () => {
    await provider.shutdown()
    metrics.disable()
    await OpenFeature.clearProviders()
    OpenFeature.clearHooks()
  })
  // the application: evaluates in its own process, with the MetricsHook
  OpenFeature.clearHooks()
  OpenFeature.addHooks(new MetricsHook())
  await OpenFeature.setProviderAndWait(
    new InMemoryProvider({
      // the flag's own variant names: BOOLEAN's built-in ones
      'local/dark': { variants: { true: true, false: false }, defaultVariant: 'true', disabled: false },
      'local/unknown-here': { variants: { on: true }, defaultVariant: 'on', disabled: false },
    }),
  )
  const client = OpenFeature.getClient()
  const usage = async () => (await a.req('GET', '/api/flags/local/dark/usage', { token: a.adminToken })).body
  return { a, reader, client, usage }
}

for (const json of [false, true])
  test(`${json ? 'JSON' : 'protobuf'}: counts arrive in usage by variant; a cumulative counter is counted by its increase`, async () => {
    const { reader, client, usage } = await setUp(json)
    for (let i = 0; i < 5; i++) await client.getBooleanValue('local/dark', false)
    await client.getBooleanValue('local/unknown-here', false) // a flag flagd does not have: ignored
    await reader.forceFlush()
    expect(await usage()).toMatchObject({ total: 5, variants: { true: 5 } })
    // the same cumulative series again, 3 more: 8 in all, not 13
    for (let i = 0; i < 3; i++) await client.getBooleanValue('local/dark', false)
    await reader.forceFlush()
    expect((await usage()).total).toBe(8)
    await reader.forceFlush() // nothing new: nothing more
    expect((await usage()).total).toBe(8)
  })

test('POST /v1/metrics needs a token with flag:evaluate, and OTLP content', async () => {
  const a = await createTestApp({})
  apps.push(a)
  expect((await a.req('POST', '/v1/metrics', { rawBody: '{}', headers: { 'content-type': 'application/json' } })).status).toBe(401)
  const reader = await a.userWith(['user:read'])
  const refused = await a.req('POST', '/v1/metrics', {
    token: reader.token,
    rawBody: '{}',
    headers: { 'content-type': 'application/json' },
  })
  expect(refused.status).toBe(403)
  expect(
    (await a.req('POST', '/v1/metrics', { token: a.adminToken, rawBody: 'x', headers: { 'content-type': 'text/plain' } })).status,
  ).toBe(415)
  expect(
    (await a.req('POST', '/v1/metrics', { token: a.adminToken, rawBody: '{', headers: { 'content-type': 'application/json' } })).status,
  ).toBe(400)
  // field 1 announces 127 bytes and none follow: a truncated protobuf message
  const truncated = await a.req('POST', '/v1/metrics', {
    token: a.adminToken,
    rawBody: '\n\x7f',
    headers: { 'content-type': 'application/x-protobuf' },
  })
  expect(truncated.status).toBe(400)
  expect(JSON.stringify(truncated.body)).toContain('not an OTLP metrics request')
  const empty = await a.req('POST', '/v1/metrics', { token: a.adminToken, rawBody: '{}', headers: { 'content-type': 'application/json' } })
  expect(empty.status).toBe(200)
})

test('a hostile report keeps nothing it names: made-up variants are ignored, series kept as digests in bounded bytes', async () => {
  const a = await createTestApp({})
  apps.push(a)
  expect(
    (await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'local/dark', type: 'BOOLEAN', value: true } })).status,
  ).toBe(201)
  const token = (await a.req('POST', '/api/tokens', { token: a.adminToken, body: { name: 'app', permissions: ['flag:evaluate'] } })).body
    .token
  const kv = (key: string, value: string) => ({ key, value: { stringValue: value } })
  const dataPoint = (variant: string, value: number) => ({
    attributes: [
      kv('feature_flag.key', 'local/dark'),
      kv('feature_flag.result.variant', variant),
      kv('feature_flag.result.reason', 'STATIC'),
    ],
    startTimeUnixNano: '1733550000000000000',
    asInt: String(value),
  })
  const report = (points: object[]) => ({
    resourceMetrics: [
      {
        resource: { attributes: [kv('service.name', 'x'.repeat(1_000_000))] }, // a megabyte of attributes
        scopeMetrics: [
          {
            scope: { name: 'hook' },
            metrics: [
              { name: 'feature_flag.evaluation_success_total', sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: points } },
            ],
          },
        ],
      },
    ],
  })
  const post = (body: object) =>
    a.req('POST', '/v1/metrics', { token, rawBody: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
  const made = Array.from({ length: 2000 }, (_, i) => dataPoint(`made-up-${i}`, 1_000_000_000))
  expect((await post(report([...made, dataPoint('true', 7), dataPoint('false', 2)]))).status).toBe(200)
  expect((await post(report([dataPoint('true', 9), { ...dataPoint('false', 2), asInt: undefined, asDouble: 2.5 }]))).status).toBe(200)
  const usage = (await a.req('GET', '/api/flags/local/dark/usage', { token: a.adminToken })).body
  expect(usage.variants).toEqual({ true: 9, false: 2 })
  // two series (one per variant that counts), each a digest: well under a kilobyte apiece
  const { series, bytes } = a.app.services.inProcessUsage.stored()
  expect(series).toBe(2)
  expect(bytes).toBeLessThan(2 * 1024)
})
