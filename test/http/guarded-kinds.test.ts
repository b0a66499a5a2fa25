/**
 * Every kind of guard check end to end over HTTP with the real OpenTelemetry SDK
 * (docs/guarded-rollouts.md#what-a-guard-sees): a latency histogram that is slower with the variant
 * pauses its rollout at the share it had; a counter over its threshold rolls one back even in a
 * protected environment (no change request: a guard only takes exposure away); a histogram as fast
 * with the variant keeps running.
 */

import { expect, test } from 'bun:test'
import { guardedApps } from '../helpers/guarded-app.ts'

const NOW = Date.parse('2026-12-07T12:00:00.000Z')
const FLAG = 'shop/search'
const apps = guardedApps(FLAG, NOW)

/** The guarded flag (20 % to 80 %: 50 % now), in a protected environment if asked, and the application's latency histogram and crash counter. */
async function appWith(guard: unknown, options: { protectedEnv?: boolean } = {}) {
  const { admin, meter, reader, labels } = await apps.open(guard, { fromPercent: 20, toPercent: 80 })
  if (options.protectedEnv) {
    const env = (await admin('GET', '/api/environments')).body[0].name as string
    expect((await admin('PUT', `/api/environments/${env}`, { protected: true, requiredApprovals: 1 })).status).toBe(200)
    const listed = (await admin('GET', '/api/environments')).body as { name: string; protected: boolean }[]
    expect(listed.find((e) => e.name === env)?.protected).toBe(true)
  }
  const latency = meter.createHistogram('http.server.request.duration', {
    unit: 's',
    advice: { explicitBucketBoundaries: [0.05, 0.1, 0.2, 0.4, 0.8] },
  })
  const crashes = meter.createCounter('app.crashes')
  return { admin, reader, latency, crashes, labels }
}

test('mean: a variant slower by a third pauses its rollout at the share it had; OFREP keeps those contexts', async () => {
  const { admin, reader, latency, labels } = await appWith({
    checks: [{ kind: 'mean', histogram: 'http.server.request.duration', maxIncrease: 0.01 }],
    minSamples: 100,
    action: 'pause',
  })
  for (let i = 0; i < 300; i++) {
    latency.record(0.15 + (i % 10) * 0.01, labels('true'))
    latency.record(0.1 + (i % 10) * 0.01, labels('false'))
  }
  await reader.forceFlush()
  const report = (await admin('GET', `/api/flags/${FLAG}/rollout`)).body
  expect(report).toMatchObject({
    status: 'paused',
    percent: 50,
    guard: { checks: [{ kind: 'mean', state: 'tripped', treatment: { count: 300 }, control: { count: 300 } }] },
  })
  expect(report.guard.checks[0].treatment.mean).toBeGreaterThan(report.guard.checks[0].control.mean)
  expect(report.guard.checks[0].difference.lower).toBeGreaterThan(0.01)
  // about half of the contexts keep the variant, as at the trip
  let on = 0
  for (let i = 0; i < 200; i++)
    if ((await admin('POST', `/ofrep/v1/evaluate/flags/${FLAG}`, { context: { targetingKey: `user-${i}` } })).body.value === true) on++
  expect(on).toBeGreaterThan(70)
  expect(on).toBeLessThan(130)
})

test('mean: a variant as fast as the others keeps running', async () => {
  const { admin, reader, latency, labels } = await appWith({
    checks: [{ kind: 'mean', histogram: 'http.server.request.duration' }],
    minSamples: 100,
  })
  for (let i = 0; i < 300; i++) {
    latency.record(0.1 + (i % 10) * 0.01, labels('true'))
    latency.record(0.1 + (i % 10) * 0.01, labels('false'))
  }
  await reader.forceFlush()
  expect((await admin('GET', `/api/flags/${FLAG}/rollout`)).body).toMatchObject({
    status: 'running',
    guard: { checks: [{ kind: 'mean', state: 'healthy' }] },
  })
})

test('threshold: crashes over the limit roll back in a protected environment, by the guard alone', async () => {
  const { admin, reader, crashes, labels } = await appWith(
    { checks: [{ kind: 'threshold', metric: 'app.crashes', max: 5, windowSeconds: 60 }] },
    { protectedEnv: true },
  )
  crashes.add(5, labels('true'))
  crashes.add(50, labels('false')) // control does not count for a threshold
  await reader.forceFlush()
  expect((await admin('GET', `/api/flags/${FLAG}/rollout`)).body).toMatchObject({
    status: 'running',
    guard: { checks: [{ kind: 'threshold', state: 'healthy', treatment: { increase: 5 }, control: null, difference: null }] },
  })
  crashes.add(1, labels('true'))
  await reader.forceFlush()
  expect((await admin('GET', `/api/flags/${FLAG}/rollout`)).body).toMatchObject({
    status: 'rolled-back',
    percent: 0,
    guard: { checks: [{ kind: 'threshold', state: 'tripped', treatment: { increase: 6 } }] },
  })
})

test('validation over HTTP: a bad guard is a 400 naming rollout.guard.<field>, and nothing changes', async () => {
  const { admin } = await appWith({ checks: [{ kind: 'threshold', metric: 'app.crashes', max: 5, windowSeconds: 60 }] })
  const before = (await admin('GET', `/api/flags/${FLAG}`)).body
  const bad = async (guard: unknown, field: string) => {
    const rollout = { ...before.rollout, guard }
    const res = await admin('PUT', `/api/flags/${FLAG}`, { type: 'BOOLEAN', value: false, rollout })
    expect([res.status, JSON.stringify(res.body)]).toEqual([400, expect.stringContaining(field)])
  }
  await bad({ checks: [] }, 'rollout.guard.checks')
  await bad({ checks: [{ kind: 'error-rate', errors: '9bad', total: 'ok' }] }, 'rollout.guard.checks[0].errors')
  await bad({ checks: [{ kind: 'nope' }] }, 'rollout.guard.checks[0].kind')
  await bad({ checks: [{ kind: 'threshold', metric: 'm', max: 1, windowSeconds: 5 }] }, 'rollout.guard.checks[0].windowSeconds')
  await bad({ checks: [{ kind: 'mean', histogram: 'h' }], alpha: 0.5 }, 'rollout.guard.alpha')
  await bad({ checks: [{ kind: 'mean', histogram: 'h' }], minSamples: 5 }, 'rollout.guard.minSamples')
  await bad({ checks: [{ kind: 'mean', histogram: 'h' }], action: 'explode' }, 'rollout.guard.action')
  expect((await admin('GET', `/api/flags/${FLAG}`)).body.revision).toBe(before.revision)
})
