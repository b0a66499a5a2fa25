/**
 * docs/api.md#archive and docs/api.md#lifecycle over HTTP: the archive and restore routes, the answers
 * of every evaluation transport for an archived flag (OFREP single and bulk, Connect, the trace
 * endpoint), the list's filters, and read-only fields ignored on PUT.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
let app: string
beforeAll(async () => {
  // the Connect routes exist while the evaluation port is on
  t = await createTestApp({ FLAGD_EVALUATION_PORT: '0' })
  const body = (name: string, extra = {}) => ({ token: t.adminToken, body: { name, type: 'BOOLEAN', value: true, ...extra } })
  await t.req('POST', '/api/flags', body('web/old', { kind: 'experiment', owner: 'web', tags: ['x', 'y'] }))
  await t.req('POST', '/api/flags', body('web/live', { owner: 'web', tags: ['x'] }))
  app = (await t.req('POST', '/api/tokens', { token: t.adminToken, body: { name: 'app', permissions: ['flag:evaluate'] } })).body.token
})
afterAll(() => t.close())

const admin = (method: string, path: string, body?: unknown) =>
  t.req(method, path, { token: t.adminToken, ...(body === undefined ? {} : { body }) })
const listed = async (query: string) => ((await admin('GET', `/api/flags${query}`)).body as { name: string }[]).map((f) => f.name)

test('the list filters by kind, owner and tags (repeated: every one), and a bad filter is 400', async () => {
  expect(await listed('?kind=experiment')).toEqual(['web/old'])
  expect(await listed('?owner=web&tag=x')).toEqual(['web/live', 'web/old'])
  expect(await listed('?tag=x&tag=y')).toEqual(['web/old'])
  const bad = await admin('GET', '/api/flags?kind=someday')
  expect(bad.status).toBe(400)
  expect(JSON.stringify(bad.body)).toContain('kind')
  // a filter of one value given twice is refused, never silently the last
  for (const query of ['?archived=true&archived=false', '?kind=release&kind=experiment', '?owner=a&owner=b']) {
    const twice = await admin('GET', `/api/flags${query}`)
    expect([query, twice.status, twice.body?.error?.message]).toEqual([query, 400, expect.stringContaining('takes one value')])
  }
  const plain = await admin('GET', '/api/flags')
  const filtered = await admin('GET', '/api/flags?tag=y')
  expect(filtered.headers.get('etag')).not.toBe(plain.headers.get('etag'))
})

test('PUT ignores potentiallyStale and archived sent back from a GET', async () => {
  const got = (await admin('GET', '/api/flags/web/live')).body
  expect(got).toMatchObject({ archived: false, potentiallyStale: false, kind: 'release', tags: ['x'] })
  const put = await admin('PUT', '/api/flags/web/live', { ...got, archived: true, potentiallyStale: true, description: 'd' })
  expect(put.status).toBe(200)
  expect(put.body).toMatchObject({ archived: false, description: 'd' })
})

test('archive answers 200 with the flag, and every evaluation path then answers FLAG_NOT_FOUND', async () => {
  const archived = await admin('POST', '/api/flags/web/old/archive')
  expect(archived.status).toBe(200)
  expect(archived.body).toMatchObject({ name: 'web/old', archived: true, revision: 2 })
  expect(archived.headers.get('etag')).toBe('"2"')

  const single = await t.req('POST', '/ofrep/v1/evaluate/flags/web/old', { token: app, body: { context: {} } })
  expect(single.status).toBe(404)
  expect(single.body).toMatchObject({ errorCode: 'FLAG_NOT_FOUND' })
  const bulk = await t.req('POST', '/ofrep/v1/evaluate/flags', { token: app, body: { context: {} } })
  expect((bulk.body.flags as { key: string }[]).map((f) => f.key)).toEqual(['web/live'])
  const connect = await t.req('POST', '/flagd.evaluation.v1.Service/ResolveBoolean', {
    token: app,
    rawBody: '{"flagKey":"web/old","context":{}}',
    headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
  })
  expect(connect.status).toBe(404)
  expect(connect.text).toContain('not_found')
  const traced = await admin('POST', '/api/flags/web/old/evaluate', { context: {} })
  expect(traced.status).toBe(404)

  expect((await admin('GET', '/api/flags/web/old')).body).toMatchObject({ archived: true })
  expect(await listed('')).toEqual(['web/live'])
  expect(await listed('?archived=true')).toEqual(['web/old'])
  expect((await admin('PUT', '/api/flags/web/old', { value: false })).status).toBe(409)
  const again = await admin('POST', '/api/flags', { name: 'web/old', type: 'BOOLEAN' })
  expect(again.status).toBe(409)
  expect(again.text).toContain('archived')
  expect((await admin('POST', '/api/flags/web/old/archive')).status).toBe(409)
})

test('restore answers 200 and the flag evaluates again; restoring a live flag is 409, an unknown one 404', async () => {
  const restored = await admin('POST', '/api/flags/web/old/restore')
  expect(restored.status).toBe(200)
  expect(restored.body).toMatchObject({ archived: false, revision: 3 })
  const single = await t.req('POST', '/ofrep/v1/evaluate/flags/web/old', { token: app, body: { context: {} } })
  expect(single.body).toMatchObject({ value: true })
  expect((await admin('POST', '/api/flags/web/old/restore')).status).toBe(409)
  expect((await admin('POST', '/api/flags/web/none/archive')).status).toBe(404)
})

test('archive needs flag:write: a reader is 403 and nothing changes', async () => {
  const reader = (await t.userWith(['flag:read'])).token
  const res = await t.req('POST', '/api/flags/web/live/archive', { token: reader })
  expect(res.status).toBe(403)
  expect((await admin('GET', '/api/flags/web/live')).body.archived).toBe(false)
})

test('archived state, kind, owner and tags survive a restart', async () => {
  expect((await admin('POST', '/api/flags/web/live/archive')).status).toBe(200)
  t = await t.restart({ FLAGD_EVALUATION_PORT: '0' })
  expect((await admin('GET', '/api/flags/web/live')).body).toMatchObject({ archived: true, owner: 'web', tags: ['x'] })
  expect((await admin('GET', '/api/flags/web/old')).body).toMatchObject({ archived: false, kind: 'experiment' })
  expect(await listed('?archived=true')).toEqual(['web/live'])
})
