/**
 * Progressive rollouts (docs/change-control.md#progressive-rollouts): validated, served to a share that
 * rises with time in steps, sticky per targetingKey, the same in OFREP and in flagd's export as
 * OpenFeature's own evaluator (`@openfeature/flagd-core`) reads it at every moment, with bulk ETags
 * that move with the steps and a trace that says where the rollout stands.
 */

import { afterEach, expect, setSystemTime, test } from 'bun:test'
import { evaluationMethod } from '../../src/sync/evaluation-protocol.ts'
import { oracle } from '../helpers/flagd-oracle.ts'
import { serveEvaluation } from '../helpers/served-app.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let apps: TestApp[] = []
afterEach(async () => {
  setSystemTime()
  for (const a of apps) await a.close()
  apps = []
})

const START = Date.parse('2026-12-01T09:00:00.000Z')
const rollout = (extra: Record<string, unknown> = {}) => ({
  variant: 'true',
  start: new Date(START).toISOString(),
  end: new Date(START + 1000_000).toISOString(),
  fromPercent: 10,
  toPercent: 90,
  ...extra,
})

async function app(env: Record<string, string> = {}) {
  setSystemTime(new Date(START - 60_000))
  const a = await createTestApp(env)
  apps.push(a)
  const admin = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  return { a, admin }
}

const keys = Array.from({ length: 300 }, (_, i) => `user-${i}`)

test('a rollout is checked: a variant of the flag, start before end, 0 ≤ from ≤ to ≤ 100', async () => {
  const { admin } = await app()
  expect((await admin('POST', '/api/flags', { name: 'b', type: 'BOOLEAN', value: false })).status).toBe(201)
  const cases: [Record<string, unknown>, string][] = [
    [rollout({ variant: 'maybe' }), 'rollout.variant'],
    [rollout({ end: new Date(START - 1).toISOString() }), 'rollout.end'],
    [rollout({ fromPercent: -1 }), 'rollout.fromPercent'],
    [rollout({ toPercent: 101 }), 'rollout.toPercent'],
    [rollout({ fromPercent: 50, toPercent: 20 }), 'rollout.toPercent'],
    [rollout({ start: 'soon' }), 'rollout.start'],
    [rollout({ speed: 2 }), 'rollout.speed'],
  ]
  for (const [body, field] of cases) {
    const res = await admin('PUT', '/api/flags/b', { rollout: body })
    expect(res.status, field).toBe(400)
    expect(JSON.stringify(res.body.error.details), field).toContain(field)
  }
  expect((await admin('POST', '/api/flags', { name: 's', type: 'STRING', value: 'x' })).status).toBe(201)
  expect((await admin('PUT', '/api/flags/s', { rollout: rollout({ variant: 'x' }) })).status).toBe(400)
  expect((await admin('GET', '/api/flags/b')).body.revision).toBe(1)
  const set = await admin('PUT', '/api/flags/b', { rollout: rollout() })
  expect(set.status).toBe(200)
  // read-only status and percent beside the fields as written (docs/guarded-rollouts.md#status-and-percent)
  expect(set.body.rollout).toEqual({ ...rollout(), status: 'pending', percent: 10 })
  expect((await admin('PUT', '/api/flags/b', { rollout: null })).body.rollout).toBeUndefined()
})

test('the share rises in steps, sticky per targetingKey; OFREP and flagd-core on the export agree at every moment', async () => {
  const { admin } = await app()
  expect((await admin('POST', '/api/flags', { name: 'b', type: 'BOOLEAN', value: false, rollout: rollout() })).status).toBe(201)
  const exported = (await admin('GET', '/api/migrations/export?format=flagd')).body
  let before = new Set<string>()
  for (const offset of [-5_000, 0, 10_000, 250_000, 500_000, 777_000, 999_999, 1000_000, 2000_000]) {
    setSystemTime(new Date(START + offset))
    const on = new Set<string>()
    for (const key of keys) {
      const answer = await admin('POST', '/ofrep/v1/evaluate/flags/b', { context: { targetingKey: key } })
      expect(answer.body.value, `${key} at +${offset} ms`).toBe(oracle(exported, 'b', { targetingKey: key }).value)
      expect(answer.body.variant, `${key} at +${offset} ms`).toBe(oracle(exported, 'b', { targetingKey: key }).variant)
      if (answer.body.value === true) {
        on.add(key)
        expect(answer.body.reason).toBe('TARGETING_MATCH')
      } else expect(answer.body.reason).toBe('STATIC') // outside the share: as without the rollout
    }
    // whoever had it keeps it
    for (const key of before) expect(on.has(key), `${key} lost the variant at +${offset} ms`).toBe(true)
    before = on
    const share = (on.size / keys.length) * 100
    const expected = offset < 0 ? 10 : offset >= 1000_000 ? 90 : 10 + (80 * Math.floor(offset / 10_000)) / 100
    expect(Math.abs(share - expected), `share ${share} % at +${offset} ms`).toBeLessThan(8)
  }
})

test('the bulk ETag moves with the steps, and the trace says where the rollout stands', async () => {
  const { admin } = await app()
  expect((await admin('POST', '/api/flags', { name: 'b', type: 'BOOLEAN', value: false, rollout: rollout() })).status).toBe(201)
  setSystemTime(new Date(START + 250_000))
  const bulk = () => admin('POST', '/ofrep/v1/evaluate/flags', { context: { targetingKey: 'u' } })
  const first = (await bulk()).headers.get('etag')
  setSystemTime(new Date(START + 260_000))
  expect((await bulk()).headers.get('etag')).not.toBe(first)
  const traced = await admin('POST', '/api/flags/b/evaluate', { context: { targetingKey: 'u' } })
  expect(traced.body.trace[0].text).toContain('rollout at 30.8 % (step 26 of 100)')
})

test("a rollout is each environment's own, and a change request may start one", async () => {
  const { admin } = await app()
  expect((await admin('POST', '/api/flags', { name: 'b', type: 'BOOLEAN', value: false })).status).toBe(201)
  expect((await admin('PUT', '/api/environments/staging', {})).status).toBe(201)
  const made = await admin('POST', '/api/change-requests', {
    environment: 'staging',
    title: 'ramp up',
    changes: [{ flag: 'b', set: { rollout: rollout() } }],
  })
  expect(made.body.state).toBe('approved')
  expect((await admin('POST', `/api/change-requests/${made.body.id}/apply`)).body.state).toBe('applied')
  expect((await admin('GET', '/api/flags/b?environment=staging')).body.rollout).toEqual({ ...rollout(), status: 'pending', percent: 10 })
  expect((await admin('GET', '/api/flags/b')).body.rollout).toBeUndefined()
  expect((await admin('GET', '/api/flags/b/environments')).body.staging.rollout).toEqual({ ...rollout(), status: 'pending', percent: 10 })
})

test('a rollout by another attribute agrees with flagd-core too; a context without it stays out', async () => {
  const { admin } = await app()
  const by = rollout({ by: 'account' })
  expect((await admin('POST', '/api/flags', { name: 'c', type: 'BOOLEAN', value: false, rollout: by })).status).toBe(201)
  const exported = (await admin('GET', '/api/migrations/export?format=flagd')).body
  setSystemTime(new Date(START + 500_000))
  let on = 0
  for (const [i, key] of keys.entries()) {
    const context = i % 10 === 0 ? { targetingKey: key } : { targetingKey: key, account: `acct-${i % 50}` }
    const answer = await admin('POST', '/ofrep/v1/evaluate/flags/c', { context })
    expect(answer.body.value, JSON.stringify(context)).toBe(oracle(exported, 'c', context).value)
    if (answer.body.value === true) {
      on++
      expect('account' in context).toBe(true)
    }
  }
  expect(on).toBeGreaterThan(0)
})

test('outside the share OFREP and RPC answer as the flag without the rollout, STATIC; flagd-core says DEFAULT with the same value and variant', async () => {
  // the evaluation port on: its Connect calls are routes of the app
  const { a, admin } = await app({ FLAGD_EVALUATION_PORT: '0', FLAGD_EVALUATION_ANONYMOUS: 'true' })
  expect((await admin('POST', '/api/flags', { name: 'b', type: 'BOOLEAN', value: false, rollout: rollout() })).status).toBe(201)
  const rpc = await serveEvaluation(a)
  try {
    const resolve = async (context: Record<string, unknown>) =>
      (await fetch(`http://127.0.0.1:${rpc.port}${evaluationMethod('v2', 'ResolveBoolean').path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
        body: JSON.stringify({ flagKey: 'b', context }),
      }).then((r) => r.json())) as Record<string, unknown>
    const exported = (await admin('GET', '/api/migrations/export?format=flagd')).body
    // no targetingKey: never in the share
    expect((await admin('POST', '/ofrep/v1/evaluate/flags/b', { context: {} })).body).toMatchObject({
      value: false,
      variant: 'value',
      reason: 'STATIC',
    })
    expect(await resolve({})).toMatchObject({ value: false, variant: 'value', reason: 'STATIC' })
    expect(oracle(exported, 'b', {})).toMatchObject({ value: false, variant: 'value', reason: 'DEFAULT' })
    let outside = 0
    for (const key of keys.slice(0, 40)) {
      const ofrep = (await admin('POST', '/ofrep/v1/evaluate/flags/b', { context: { targetingKey: key } })).body
      if (ofrep.value === true) continue
      outside++
      expect(ofrep).toMatchObject({ variant: 'value', reason: 'STATIC' })
      expect(await resolve({ targetingKey: key })).toMatchObject({ value: false, variant: 'value', reason: 'STATIC' })
    }
    expect(outside).toBeGreaterThan(0)
  } finally {
    await rpc.close()
  }
})

test('a guard is checked field by field over HTTP, and a rollout read is accepted back as it is', async () => {
  const { admin } = await app()
  expect((await admin('POST', '/api/flags', { name: 'g', type: 'BOOLEAN', value: false })).status).toBe(201)
  const check = { kind: 'error-rate', errors: 'app.errors', total: 'app.requests' }
  const cases: [unknown, string][] = [
    [{ checks: [] }, 'rollout.guard.checks'],
    [{ checks: [check, { kind: 'p99' }] }, 'rollout.guard.checks[1].kind'],
    [{ checks: [check, { ...check, errors: '5xx' }] }, 'rollout.guard.checks[1].errors'],
    [{ checks: [check], alpha: 0.5 }, 'rollout.guard.alpha'],
    [{ checks: [check], action: 'alert' }, 'rollout.guard.action'],
  ]
  for (const [guard, field] of cases) {
    const res = await admin('PUT', '/api/flags/g', { rollout: rollout({ guard }) })
    expect(res.status, field).toBe(400)
    expect(
      res.body.error.details.errors.map((e: { field: string }) => e.field),
      field,
    ).toEqual([field])
  }
  expect((await admin('GET', '/api/flags/g')).body.revision).toBe(1)
  const set = await admin('PUT', '/api/flags/g', { rollout: rollout({ guard: { checks: [check] } }) })
  expect(set.status).toBe(200)
  expect(set.body.rollout).toEqual({ ...rollout({ guard: { checks: [check] } }), status: 'pending', percent: 10 })
  // sent back as read: accepted, nothing new
  const again = await admin('PUT', '/api/flags/g', set.body)
  expect(again.status).toBe(200)
  expect(again.body.revision).toBe(set.body.revision)
})
