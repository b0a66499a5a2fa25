/**
 * docs/api.md#usage over HTTP: OFREP evaluations (single, bulk, bulk 304) counted per flag and variant,
 * read at once through `GET /api/flags/{name}/usage` and `GET /api/usage`, kept across a restart once
 * written; unknown flag keys never counted; bad `since` refused.
 */

import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { createTestApp, type TestApp, tempDir } from '../helpers/test-app.ts'

const dirs: string[] = []
const apps: TestApp[] = []
afterAll(async () => {
  for (const a of apps) await a.close().catch(() => {})
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

async function app(dataDir = tempDir()) {
  if (!dirs.includes(dataDir)) dirs.push(dataDir)
  const a = await createTestApp({}, { dataDir })
  apps.push(a)
  return a
}
const ofrep = (a: TestApp, key: string, context: Record<string, unknown>) =>
  a.req('POST', `/ofrep/v1/evaluate/flags/${key}`, { token: a.adminToken, body: { context } })

test('single and bulk evaluations are counted per variant and hour, and read at once', async () => {
  const a = await app()
  const rule = { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'on', 'off'] }
  await a.req('POST', '/api/flags', {
    token: a.adminToken,
    body: { name: 'u/rollout', type: 'BOOLEAN', variants: { on: true, off: false }, targeting: rule },
  })
  await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'u/static', type: 'INTEGER', value: 3 } })
  for (const plan of ['pro', 'free', 'free']) expect((await ofrep(a, 'u/rollout', { plan })).status).toBe(200)
  expect((await ofrep(a, 'u/missing', {})).status).toBe(404) // unknown keys are not counted
  const bulk = await a.req('POST', '/ofrep/v1/evaluate/flags', { token: a.adminToken, body: { context: { plan: 'pro' } } })
  expect(bulk.status).toBe(200)
  const etag = bulk.headers.get('etag') as string
  const again = await a.req('POST', '/ofrep/v1/evaluate/flags', {
    token: a.adminToken,
    body: { context: { plan: 'pro' } },
    headers: { 'if-none-match': etag },
  })
  expect(again.status).toBe(304)

  const usage = await a.req('GET', '/api/flags/u/rollout/usage', { token: a.adminToken })
  expect(usage.status).toBe(200)
  expect(usage.body).toMatchObject({ name: 'u/rollout', total: 5, variants: { on: 2, off: 2 } }) // the 304 counts without a variant
  expect(usage.body.hours).toEqual([{ at: expect.stringMatching(/T\d\d:00:00\.000Z$/), count: 5 }])
  expect(Date.parse(usage.body.lastEvaluatedAt)).toBeGreaterThan(Date.now() - 60_000)
  const statics = await a.req('GET', '/api/flags/u/static/usage', { token: a.adminToken })
  expect(statics.body).toMatchObject({ total: 2, variants: { value: 1 } })

  const list = await a.req('GET', '/api/usage', { token: a.adminToken })
  expect(list.body).toEqual([
    {
      name: 'u/rollout',
      total: 5,
      lastEvaluatedAt: expect.any(String),
      lastSyncedAt: null,
      lastServedInProcessAt: null,
      heldInProcess: false,
      stale: false,
      potentiallyStale: false,
      archived: false,
    },
    {
      name: 'u/static',
      total: 2,
      lastEvaluatedAt: expect.any(String),
      lastSyncedAt: null,
      lastServedInProcessAt: null,
      heldInProcess: false,
      stale: false,
      potentiallyStale: false,
      archived: false,
    },
  ])
})

test('a bulk answer served from the cache counts the variants its rules chose, as a fresh one does', async () => {
  const a = await app()
  const rule = { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'on', 'off'] }
  await a.req('POST', '/api/flags', {
    token: a.adminToken,
    body: { name: 'k/rollout', type: 'BOOLEAN', variants: { on: true, off: false }, targeting: rule },
  })
  // the first answer of a context is not kept, the second is kept, the third and fourth come from the cache
  for (let i = 0; i < 4; i++) {
    const bulk = await a.req('POST', '/ofrep/v1/evaluate/flags', { token: a.adminToken, body: { context: { plan: 'pro' } } })
    expect(bulk.status).toBe(200)
  }
  expect(a.app.services.cache.size().regions['bulk-answers']?.entries).toBe(1)
  const usage = await a.req('GET', '/api/flags/k/rollout/usage', { token: a.adminToken })
  expect(usage.body).toMatchObject({ total: 4, variants: { on: 4 } })
})

test('a flag never evaluated: zero, null, not stale while new; bad since and unknown flags refused', async () => {
  const a = await app()
  await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'quiet', type: 'BOOLEAN' } })
  const usage = await a.req('GET', '/api/flags/quiet/usage?since=2026-01-01', { token: a.adminToken })
  expect(usage.body).toEqual({
    name: 'quiet',
    total: 0,
    lastEvaluatedAt: null,
    lastSyncedAt: null,
    lastServedInProcessAt: null,
    heldInProcess: false,
    variants: {},
    hours: [],
  })
  expect((await a.req('GET', '/api/flags/quiet/usage?since=yesterday', { token: a.adminToken })).status).toBe(400)
  for (const bad of ['2026-11-27%20junk', '2026-02-31', '0000-01-01', '2026-11-27T25:00:00Z', '2026-11-27T10:00:00'])
    expect([bad, (await a.req('GET', `/api/flags/quiet/usage?since=${bad}`, { token: a.adminToken })).status]).toEqual([bad, 400])
  for (const good of ['2026-02-28', '2026-11-27T10:00:00Z', '2026-11-27T10:00:00.123%2B01:00'])
    expect([good, (await a.req('GET', `/api/flags/quiet/usage?since=${good}`, { token: a.adminToken })).status]).toEqual([good, 200])
  expect((await a.req('GET', '/api/flags/nope/usage', { token: a.adminToken })).status).toBe(404)
  expect((await a.req('GET', '/api/usage', { token: a.adminToken })).body).toEqual([
    {
      name: 'quiet',
      total: 0,
      lastEvaluatedAt: null,
      lastSyncedAt: null,
      lastServedInProcessAt: null,
      heldInProcess: false,
      stale: false,
      potentiallyStale: false,
      archived: false,
    },
  ])
  // a flag whose own name ends in /usage is read as a flag
  await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'report/usage', type: 'INTEGER', value: 1 } })
  expect((await a.req('GET', '/api/flags/report/usage', { token: a.adminToken })).body).toMatchObject({ name: 'report/usage', value: 1 })
})

test('written counts survive a restart; unwritten ones are written at shutdown', async () => {
  const dir = tempDir()
  const first = await app(dir)
  await first.req('POST', '/api/flags', { token: first.adminToken, body: { name: 'kept', type: 'BOOLEAN', value: true } })
  for (let i = 0; i < 4; i++) await ofrep(first, 'kept', {})
  await first.app.services.usage.flush()
  await ofrep(first, 'kept', {}) // not written until shutdown
  await first.close()
  apps.splice(apps.indexOf(first), 1)
  const second = await app(dir)
  const usage = await second.req('GET', '/api/flags/kept/usage', { token: second.adminToken })
  expect(usage.body).toMatchObject({ total: 5, variants: { value: 5 } })
})

test('flagd_evaluations_total{flag, variant, reason} only with metrics.perFlag, as of the scrape (not of the last write)', async () => {
  const dir = tempDir()
  dirs.push(dir)
  const a = await createTestApp({ FLAGD_METRICS_PER_FLAG: 'true' }, { dataDir: dir })
  apps.push(a)
  await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'm/flag', type: 'BOOLEAN', value: true } })
  const scrape = async () => await (await a.app.http.handle(new Request('http://localhost/metrics'))).text()
  const series = 'flagd_evaluations_total{flag="m/flag",variant="value",reason="STATIC"}'
  for (let i = 0; i < 3; i++) await ofrep(a, 'm/flag', {})
  expect(await scrape()).toContain(`${series} 3`) // before the minute's write
  await a.app.services.usage.flush()
  expect(await scrape()).toContain(`${series} 3`) // written: still once
  for (let i = 0; i < 2; i++) await ofrep(a, 'm/flag', {})
  expect(await scrape()).toContain(`${series} 5`)
  await a.app.services.usage.flush()
  expect(await scrape()).toContain(`${series} 5`)

  const plain = await app()
  await plain.req('POST', '/api/flags', { token: plain.adminToken, body: { name: 'm/flag', type: 'BOOLEAN', value: true } })
  await ofrep(plain, 'm/flag', {})
  await plain.app.services.usage.flush()
  expect(await (await plain.app.http.handle(new Request('http://localhost/metrics'))).text()).not.toContain('flagd_evaluations_total')
})

test('a flag an in-process provider holds is not stale, though its evaluations are not counted; stale again staleDays after', async () => {
  let now = Date.now()
  const dir = tempDir()
  dirs.push(dir)
  const a = await createTestApp({}, { dataDir: dir, now: () => new Date(now) })
  apps.push(a)
  for (const name of ['held/a', 'lonely/b'])
    expect((await a.req('POST', '/api/flags', { token: a.adminToken, body: { name, type: 'BOOLEAN', value: true } })).status).toBe(201)
  const token = (
    await a.req('POST', '/api/tokens', {
      token: a.adminToken,
      body: { name: 'svc', permissions: ['flag:evaluate'], flagPrefixes: ['held/'] },
    })
  ).body.token
  // a token that does not expire reads usage after the clock has moved (sessions would have)
  const reader = (await a.req('POST', '/api/tokens', { token: a.adminToken, body: { name: 'reader', permissions: ['flag:read'] } })).body
    .token
  const staleness = async () =>
    Object.fromEntries(
      ((await a.req('GET', '/api/usage', { token: reader })).body as { name: string; stale: boolean }[]).map((u) => [u.name, u.stale]),
    )
  now += 40 * 86_400_000
  expect(await staleness()).toEqual({ 'held/a': true, 'lonely/b': true })
  // what the sync transport does when a provider's stream opens and closes
  const stream = a.app.services.sync.held()
  stream.sent(await a.app.services.sync.callerOf(token))
  expect(await staleness()).toEqual({ 'held/a': false, 'lonely/b': true })
  const one = await a.req('GET', '/api/flags/held/a/usage', { token: reader })
  expect(one.body).toMatchObject({
    total: 0,
    lastSyncedAt: new Date(now).toISOString(),
    lastServedInProcessAt: new Date(now).toISOString(),
  })
  now += 86_400_000
  stream.release()
  now += 10 * 86_400_000
  expect(await staleness()).toEqual({ 'held/a': false, 'lonely/b': true }) // let go 10 days ago
  now += 21 * 86_400_000
  expect(await staleness()).toEqual({ 'held/a': true, 'lonely/b': true })
})

test("a reader of one environment reads a flag's usage there (the route no longer reads the default environment first)", async () => {
  const a = await app()
  expect((await a.req('PUT', '/api/environments/staging', { token: a.adminToken, body: {} })).status).toBe(201)
  expect((await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'u/env', type: 'BOOLEAN', value: true } })).status).toBe(
    201,
  )
  const reader = await a.userWith(['flag:read@staging'], 'staging-reader')
  const usage = await a.req('GET', '/api/flags/u/env/usage?environment=staging', { token: reader.token })
  expect(usage.status).toBe(200)
  expect(usage.body.name).toBe('u/env')
  // and the default environment's stays closed to it
  expect((await a.req('GET', '/api/flags/u/env/usage', { token: reader.token })).status).toBe(403)
})

test('GET /api/usage?since= counts from then on; a bad since is a 400 naming it', async () => {
  const a = await app()
  await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'week', type: 'INTEGER', value: 1 } })
  expect((await ofrep(a, 'week', {})).status).toBe(200)
  const past = await a.req('GET', '/api/usage?since=2026-01-01', { token: a.adminToken })
  expect(past.status).toBe(200)
  expect(past.body).toMatchObject([{ name: 'week', total: 1 }])
  const later = '2099-01-01T00:00:00.000Z' // after any evaluation the test makes
  expect((await a.req('GET', `/api/usage?since=${later}`, { token: a.adminToken })).body).toMatchObject([
    { name: 'week', total: 0, lastEvaluatedAt: null, stale: false },
  ])
  for (const bad of ['yesterday', '2026-02-31', '2026-11-27T10:00:00']) {
    const answer = await a.req('GET', `/api/usage?since=${bad}`, { token: a.adminToken })
    expect([bad, answer.status, answer.body.error?.details?.field]).toEqual([bad, 400, 'since'])
  }
})
