/**
 * A guarded rollout end to end over HTTP (docs/guarded-rollouts.md): the guard is written with the
 * rollout through the API, an application with the real OpenTelemetry SDK labels its own counters
 * with the flag's variant and exports them, and when the variant does worse the report that shows
 * it stops the rollout before its answer returns: `GET …/rollout` says rolled back with the
 * evidence, OFREP and the flagd export serve the flag without the rollout, the audit log has the
 * guard's entry and the daemon's log a `warn` line. A variant no worse keeps running.
 */

import { afterEach, expect, test } from 'bun:test'
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto'
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import { capturedLogger } from '../helpers/captured-logger.ts'
import { serveApp } from '../helpers/served-app.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

const NOW = Date.parse('2026-12-07T12:00:00.000Z')
const FLAG = 'shop/checkout'
const cleanups: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const GUARD = { checks: [{ kind: 'error-rate', errors: 'app.errors', total: 'app.requests' }], minSamples: 100 }

async function guardedApp() {
  const log = capturedLogger()
  const a: TestApp = await createTestApp({}, { now: () => new Date(NOW), logger: log.logger as never })
  cleanups.push(() => a.close())
  const served = serveApp(a)
  cleanups.push(() => served.stop())
  const admin = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, ...(body ? { body } : {}) })
  expect((await admin('POST', '/api/flags', { name: FLAG, type: 'BOOLEAN', value: false })).status).toBe(201)
  const rollout = {
    variant: 'true',
    start: new Date(NOW - 3_600_000).toISOString(),
    end: new Date(NOW + 3_600_000).toISOString(),
    fromPercent: 0,
    toPercent: 100,
    guard: GUARD,
  }
  const put = await admin('PUT', `/api/flags/${FLAG}`, { type: 'BOOLEAN', value: false, rollout })
  expect(put.status).toBe(200)
  const token = (await admin('POST', '/api/tokens', { name: 'shop', permissions: ['flag:evaluate'] })).body.token as string
  // the application: its own counters, labelled with the variant each request was answered
  const exporter = new OTLPMetricExporter({ url: `${served.base}/v1/metrics`, headers: { authorization: `Bearer ${token}` } })
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
  const provider = new MeterProvider({ readers: [reader] })
  cleanups.push(() => provider.shutdown())
  const meter = provider.getMeter('shop')
  const requests = meter.createCounter('app.requests')
  const errors = meter.createCounter('app.errors')
  const serve = (variant: string, count: number, failed: number) => {
    const labels = { 'feature_flag.key': FLAG, 'feature_flag.result.variant': variant }
    requests.add(count, labels)
    if (failed > 0) errors.add(failed, labels)
  }
  return { a, admin, reader, serve, lines: log.lines }
}

test('a variant that fails more is rolled back by the report that shows it, on every transport, audited and logged', async () => {
  const { admin, reader, serve, lines } = await guardedApp()
  const before = await admin('GET', `/api/flags/${FLAG}/rollout`)
  expect(before.body).toMatchObject({ status: 'running', percent: 50, guard: { checks: [{ state: 'collecting', difference: null }] } })
  serve('true', 400, 80)
  serve('false', 400, 4)
  await reader.forceFlush() // answered once the trip is committed

  const after = (await admin('GET', `/api/flags/${FLAG}/rollout`)).body
  expect(after).toMatchObject({
    status: 'rolled-back',
    percent: 0,
    rollout: { variant: 'true', status: 'rolled-back', percent: 0, guard: GUARD },
    guard: {
      checks: [
        {
          kind: 'error-rate',
          state: 'tripped',
          treatment: { total: 400, errors: 80, rate: 0.2 },
          control: { total: 400, errors: 4, rate: 0.01 },
        },
      ],
      trippedAt: new Date(NOW).toISOString(),
    },
  })
  expect(after.guard.checks[0].difference.lower).toBeGreaterThan(0)
  expect((await admin('GET', `/api/flags/${FLAG}`)).body.rollout).toMatchObject({ status: 'rolled-back', percent: 0 })

  // every context now gets the flag's answer without the rollout
  for (const key of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) {
    const answer = await admin('POST', `/ofrep/v1/evaluate/flags/${FLAG}`, { context: { targetingKey: key } })
    expect(answer.body).toMatchObject({ value: false })
  }
  const exported = (await admin('GET', '/api/migrations/export?format=flagd')).body
  expect(JSON.stringify(exported.flags[FLAG])).not.toContain('fractional')

  const audit = (await admin('GET', `/api/audit?flag=${encodeURIComponent(FLAG)}&action=flag.updated`)).body
  const entries = (Array.isArray(audit) ? audit : audit.entries) as Record<string, unknown>[]
  expect(entries[0]).toMatchObject({
    source: 'guard',
    actor: { type: 'system', id: 'guard', name: 'guard' },
    guard: { check: 0, kind: 'error-rate', treatment: { total: 400, errors: 80 } },
  })
  expect(lines.some((l) => l.level === 40 && l.flag === FLAG && String(l.msg).includes('guard'))).toBe(true)

  // the trip holds: more reports change nothing, and a read of the rollout keeps the evidence
  serve('true', 400, 0)
  await reader.forceFlush()
  expect((await admin('GET', `/api/flags/${FLAG}/rollout`)).body.guard.checks[0].treatment).toEqual({ total: 400, errors: 80, rate: 0.2 })
})

test('a variant no worse than the others keeps rolling out, its guard healthy once both arms have their samples', async () => {
  const { admin, reader, serve } = await guardedApp()
  serve('true', 400, 8)
  serve('false', 400, 8)
  await reader.forceFlush()
  const report = (await admin('GET', `/api/flags/${FLAG}/rollout`)).body
  expect(report).toMatchObject({
    status: 'running',
    percent: 50,
    guard: { checks: [{ state: 'healthy', treatment: { total: 400, errors: 8 }, control: { total: 400, errors: 8 } }], trippedAt: null },
  })
  expect(report.guard.checks[0].difference.lower).toBeLessThan(0)
})

test('GET …/rollout: 404 for a flag without a rollout or an unknown environment; OpenAPI names it', async () => {
  const { admin } = await guardedApp()
  expect((await admin('POST', '/api/flags', { name: 'plain', type: 'BOOLEAN', value: true })).status).toBe(201)
  expect((await admin('GET', '/api/flags/plain/rollout')).status).toBe(404)
  expect((await admin('GET', `/api/flags/${FLAG}/rollout?environment=nowhere`)).status).toBe(404)
  const doc = (await admin('GET', '/api/openapi.json')).body
  expect(doc.paths['/api/flags/{flagName}/rollout'].get.operationId).toBe('getFlagRollout')
})
