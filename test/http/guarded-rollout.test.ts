/**
 * A guarded rollout end to end over HTTP (docs/guarded-rollouts.md): the guard is written with the
 * rollout through the API, an application with the real OpenTelemetry SDK labels its own counters
 * with the flag's variant and exports them, and when the variant does worse the report that shows
 * it stops the rollout before its answer returns: `GET …/rollout` says rolled back with the
 * evidence, OFREP and the flagd export serve the flag without the rollout, the audit log has the
 * guard's entry and the daemon's log a `warn` line. A variant no worse keeps running.
 */

import { expect, test } from 'bun:test'
import { capturedLogger } from '../helpers/captured-logger.ts'
import { guardedApps } from '../helpers/guarded-app.ts'

const NOW = Date.parse('2026-12-07T12:00:00.000Z')
const FLAG = 'shop/checkout'
const apps = guardedApps(FLAG, NOW)
const GUARD = { checks: [{ kind: 'error-rate', errors: 'app.errors', total: 'app.requests' }], minSamples: 100 }

/** The guarded flag, and the application's request and error counters labelled with the variant each request was answered. */
async function guardedApp() {
  const log = capturedLogger()
  const { a, admin, meter, reader, labels } = await apps.open(GUARD, { logger: log.logger as never })
  const requests = meter.createCounter('app.requests')
  const errors = meter.createCounter('app.errors')
  const serve = (variant: string, count: number, failed: number) => {
    requests.add(count, labels(variant))
    if (failed > 0) errors.add(failed, labels(variant))
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
