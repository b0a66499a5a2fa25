/**
 * The two routers against each other: every request of the table is sent through Bun's router, wired
 * as the listener wires it, and through `http.handle()` (Elysia's router, in-process), and both
 * answers must agree on status, headers (but the request id and the date) and body. Both end in the
 * same pipeline handler, so this holds the route table's two generated routers to the same routes;
 * Bun's router must find each route of the table itself (a preflight or another method goes on to
 * Elysia's router).
 */

import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type ServedApp, serveApp } from '../helpers/served-app.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

const ORIGIN = 'https://app.example.com'
let t: TestApp
let served: ServedApp
const tokens: Record<string, string> = {}

beforeAll(async () => {
  t = await createTestApp({ FLAGD_CORS_ORIGINS: ORIGIN, FLAGD_LIMITS_BODY_BYTES: '2048' })
  for (const body of [
    { name: 'app/on', type: 'BOOLEAN', value: true },
    { name: 'app/size', type: 'INTEGER', defaultValue: 3 },
    { name: 'app/ab', type: 'AB-TEST', chancePercentB: 50 },
    { name: 'app/a.b-c_d', type: 'STRING', value: 'x' },
    { name: 'other/secret', type: 'BOOLEAN', value: true },
  ])
    expect((await t.req('POST', '/api/flags', { token: t.adminToken, body })).status).toBe(201)
  const token = async (body: object) => (await t.req('POST', '/api/tokens', { token: t.adminToken, body })).body.token as string
  tokens.admin = t.adminToken
  tokens.reader = (await t.userWith(['flag:read'])).token
  tokens.nobody = (await t.userWith(['user:read'])).token
  tokens.evaluator = await token({ name: 'app', permissions: ['flag:evaluate'], flagPrefixes: ['app/'] })
  tokens.apiReader = await token({ name: 'reader', permissions: ['flag:read'] })
  const revoked = await t.req('POST', '/api/tokens', { token: t.adminToken, body: { name: 'gone', permissions: ['flag:read'] } })
  tokens.revoked = revoked.body.token
  expect((await t.req('DELETE', `/api/tokens/${revoked.body.id}`, { token: t.adminToken })).status).toBe(200)

  served = serveApp(t)
})

afterAll(async () => {
  await served?.stop()
  await t?.close()
})

interface Case {
  name: string
  method?: string
  path: string
  headers?: Record<string, string>
  body?: string
}

const bearer = (who: string) => ({ authorization: `Bearer ${tokens[who]}` })
const apiKey = (who: string) => ({ 'x-api-key': tokens[who] as string })
const json = { 'content-type': 'application/json' }
const ofrep = (key: string) => `/ofrep/v1/evaluate/flags/${key}`

const cases = (): Case[] => [
  { name: 'health', path: '/health' },
  { name: 'health with a client request id', path: '/health', headers: { 'x-request-id': 'client-42' } },
  { name: 'health with a query', path: '/health?verbose=1' },
  { name: 'health, HEAD', method: 'HEAD', path: '/health' },
  { name: 'flag, session', path: '/api/flags/app/on', headers: bearer('admin') },
  { name: 'flag, read-only user', path: '/api/flags/app/size', headers: bearer('reader') },
  { name: 'flag, API token in X-API-Key', path: '/api/flags/app/on', headers: apiKey('apiReader') },
  { name: 'flag, API token as Bearer', path: '/api/flags/app/on', headers: bearer('apiReader') },
  { name: 'flag, percent-encoded name', path: '/api/flags/app%2Fon', headers: bearer('admin') },
  { name: 'flag, percent-encoded dot', path: '/api/flags/app/a%2Eb-c_d', headers: bearer('admin') },
  { name: 'flag, current ETag', path: '/api/flags/app/on', headers: { ...bearer('admin'), 'if-none-match': '"1"' } },
  { name: 'flag, stale ETag', path: '/api/flags/app/on', headers: { ...bearer('admin'), 'if-none-match': '"0"' } },
  { name: 'flag, allowed origin', path: '/api/flags/app/on', headers: { ...bearer('admin'), origin: ORIGIN } },
  { name: 'flag, other origin', path: '/api/flags/app/on', headers: { ...bearer('admin'), origin: 'https://evil.example' } },
  { name: 'flag, missing', path: '/api/flags/app/none', headers: bearer('admin') },
  { name: 'flag, bad percent-encoding', path: '/api/flags/app%E0%A4%A', headers: bearer('admin') },
  { name: 'flag, empty name', path: '/api/flags/', headers: bearer('admin') },
  { name: 'flag, query', path: '/api/flags/app/on?x=1', headers: bearer('admin') },
  { name: 'flag, no credentials', path: '/api/flags/app/on' },
  { name: 'flag, malformed Authorization', path: '/api/flags/app/on', headers: { authorization: 'Basic abc' } },
  {
    name: 'flag, forged session token',
    path: '/api/flags/app/on',
    headers: { authorization: `Bearer ${tokens.admin?.slice(0, -3)}xyz` },
  },
  { name: 'flag, revoked API token', path: '/api/flags/app/on', headers: apiKey('revoked') },
  {
    name: 'flag, two different credentials',
    path: '/api/flags/app/on',
    headers: { ...bearer('admin'), ...apiKey('apiReader') },
  },
  { name: 'flag, no permission', path: '/api/flags/app/on', headers: bearer('nobody') },
  { name: 'flag, evaluate-only token', path: '/api/flags/app/on', headers: apiKey('evaluator') },
  { name: 'flag, HEAD', method: 'HEAD', path: '/api/flags/app/on', headers: bearer('admin') },
  { name: 'flag, DELETE without credentials', method: 'DELETE', path: '/api/flags/app/on' },
  {
    name: 'ofrep one',
    method: 'POST',
    path: ofrep('app/ab'),
    headers: { ...apiKey('evaluator'), ...json },
    body: '{"context":{"targetingKey":"u-1"}}',
  },
  {
    name: 'ofrep one, session',
    method: 'POST',
    path: ofrep('app/on'),
    headers: { ...bearer('reader'), ...json },
    body: '{"context":{}}',
  },
  { name: 'ofrep one, empty body', method: 'POST', path: ofrep('app/on'), headers: apiKey('evaluator') },
  {
    name: 'ofrep one, query ignored',
    method: 'POST',
    path: `${ofrep('app/on')}?x=1`,
    headers: { ...apiKey('evaluator'), ...json },
    body: '{}',
  },
  {
    name: 'ofrep one, not JSON',
    method: 'POST',
    path: ofrep('app/on'),
    headers: { ...apiKey('evaluator'), ...json },
    body: '{"context":',
  },
  {
    name: 'ofrep one, context not an object',
    method: 'POST',
    path: ofrep('app/on'),
    headers: { ...apiKey('evaluator'), ...json },
    body: '{"context":[1]}',
  },
  {
    name: 'ofrep one, body over the limit',
    method: 'POST',
    path: ofrep('app/on'),
    headers: { ...apiKey('evaluator'), ...json },
    body: `{"context":{"k":"${'x'.repeat(3000)}"}}`,
  },
  {
    name: 'ofrep one, unknown flag',
    method: 'POST',
    path: ofrep('app/none'),
    headers: { ...apiKey('evaluator'), ...json },
    body: '{}',
  },
  {
    name: 'ofrep one, outside the token prefixes',
    method: 'POST',
    path: ofrep('other/secret'),
    headers: { ...apiKey('evaluator'), ...json },
    body: '{}',
  },
  {
    name: 'ofrep one, allowed origin',
    method: 'POST',
    path: ofrep('app/on'),
    headers: { ...apiKey('evaluator'), ...json, origin: ORIGIN },
    body: '{}',
  },
  { name: 'ofrep one, bad percent-encoding', method: 'POST', path: ofrep('app%E0%A4%A'), headers: apiKey('evaluator') },
  { name: 'ofrep one, no credentials', method: 'POST', path: ofrep('app/on'), headers: json, body: '{}' },
  {
    name: 'ofrep one, no permission',
    method: 'POST',
    path: ofrep('app/on'),
    headers: { ...bearer('nobody'), ...json },
    body: '{}',
  },
  {
    name: 'ofrep bulk',
    method: 'POST',
    path: '/ofrep/v1/evaluate/flags',
    headers: { ...apiKey('evaluator'), ...json },
    body: '{"context":{"targetingKey":"u-2"}}',
  },
  {
    name: 'ofrep bulk, not JSON',
    method: 'POST',
    path: '/ofrep/v1/evaluate/flags',
    headers: { ...apiKey('evaluator'), ...json },
    body: 'nope',
  },
  { name: 'ofrep bulk, no credentials', method: 'POST', path: '/ofrep/v1/evaluate/flags', body: '{}' },
  {
    name: 'ofrep bulk, preflight',
    method: 'OPTIONS',
    path: '/ofrep/v1/evaluate/flags',
    headers: { origin: ORIGIN, 'access-control-request-method': 'POST' },
  },
  { name: 'ofrep bulk, GET', path: '/ofrep/v1/evaluate/flags', headers: apiKey('evaluator') },
]

const IGNORED = new Set(['x-request-id', 'date', 'content-length'])
const headersOf = (r: Response) => [...r.headers].filter(([k]) => !IGNORED.has(k)).sort()
// each answer names a fresh stream ticket
const comparable = (text: string) => text.replace(/ticket=[^"]+/g, 'ticket=…')

describe("Bun's router and Elysia's answer alike", () => {
  test('every case of the table', async () => {
    // the first sight of a session token goes the whole way (its signature is checked there)
    for (const who of ['admin', 'reader']) await fetch(`${served.base}/api/me`, { headers: bearer(who) })
    for (const c of cases()) {
      // fetch would ask for gzip by itself; both sides are asked alike
      const headers = { 'accept-encoding': 'identity', ...(c.headers ?? {}) }
      const init = { method: c.method ?? 'GET', headers, ...(c.body === undefined ? {} : { body: c.body }) }
      const before = served.fallbackCalls()
      const viaBun = await fetch(`${served.base}${c.path}`, init)
      const bunText = await viaBun.text()
      // preflights and methods a path does not take go to Elysia's router (its 405 routes): rare, and
      // cheaper in memory than listing every method of every path in Bun's table
      const viaFallback = init.method === 'OPTIONS' || c.name === 'ofrep bulk, GET'
      expect(served.fallbackCalls(), `${c.name}: found by ${viaFallback ? "Elysia's" : "Bun's"} router`).toBe(
        before + (viaFallback ? 1 : 0),
      )
      const viaPipeline = await t.app.http.handle(new Request(`http://localhost${c.path}`, init), '127.0.0.1')
      const pipelineText = c.method === 'HEAD' ? '' : await viaPipeline.text()
      expect(viaBun.status, c.name).toBe(viaPipeline.status)
      expect(headersOf(viaBun), c.name).toEqual(headersOf(viaPipeline))
      expect(comparable(bunText), c.name).toBe(comparable(pipelineText))
      expect(viaBun.headers.get('x-request-id'), c.name).toBeTruthy()
    }
  })

  test("a client request id is echoed through Bun's router", async () => {
    const res = await fetch(`${served.base}/api/flags/app/on`, { headers: { ...bearer('admin'), 'x-request-id': 'trace-7' } })
    expect(res.headers.get('x-request-id')).toBe('trace-7')
  })

  test('a flag changed or deleted is seen at once', async () => {
    const url = `${served.base}/api/flags/app/size`
    expect((await t.req('PUT', '/api/flags/app/size', { token: t.adminToken, body: { value: 9 } })).status).toBe(200)
    expect(await (await fetch(url, { headers: bearer('admin') })).json()).toMatchObject({ value: 9, revision: 2 })
    expect((await t.req('DELETE', '/api/flags/app/size', { token: t.adminToken })).status).toBe(200)
    expect((await fetch(url, { headers: bearer('admin') })).status).toBe(404)
  })

  test('a session ended is refused from the next request', async () => {
    const user = await t.userWith(['flag:read'])
    const url = `${served.base}/api/flags/app/on`
    expect((await fetch(url, { headers: { authorization: `Bearer ${user.token}` } })).status).toBe(200)
    expect((await fetch(url, { headers: { authorization: `Bearer ${user.token}` } })).status).toBe(200)
    expect((await t.req('POST', '/api/logout', { token: user.token })).status).toBe(200)
    expect((await fetch(url, { headers: { authorization: `Bearer ${user.token}` } })).status).toBe(401)
  })

  test('a revoked API token, a lost permission and an expired token are refused at once, though the pipeline remembers credentials', async () => {
    const base = `${served.base}/api/flags/app/on`
    const made = await t.req('POST', '/api/tokens', { token: t.adminToken, body: { name: 'soon revoked', permissions: ['flag:read'] } })
    const key = { 'x-api-key': made.body.token as string }
    for (let i = 0; i < 3; i++) expect((await fetch(base, { headers: key })).status).toBe(200)
    expect((await t.req('DELETE', `/api/tokens/${made.body.id}`, { token: t.adminToken })).status).toBe(200)
    expect((await fetch(base, { headers: key })).status).toBe(401)

    const user = await t.userWith(['flag:read'])
    const session = { authorization: `Bearer ${user.token}` }
    for (let i = 0; i < 3; i++) expect((await fetch(base, { headers: session })).status).toBe(200)
    expect((await t.req('PUT', `/api/users/${user.id}`, { token: t.adminToken, body: { permissions: ['user:read'] } })).status).toBe(200)
    expect((await fetch(base, { headers: session })).status).toBe(403)

    const expiresAt = new Date(Date.now() + 1500).toISOString()
    const brief = await t.req('POST', '/api/tokens', {
      token: t.adminToken,
      body: { name: 'brief', permissions: ['flag:read'], expiresAt },
    })
    expect(brief.status).toBe(201)
    const briefKey = { 'x-api-key': brief.body.token as string }
    while (Date.now() < Date.parse(expiresAt) - 100) {
      expect((await fetch(base, { headers: briefKey })).status).toBe(200)
      await Bun.sleep(50)
    }
    await Bun.sleep(Date.parse(expiresAt) - Date.now() + 1)
    expect((await fetch(base, { headers: briefKey })).status).toBe(401)
  })

  test('an API token whose credential is remembered still has its last use recorded', async () => {
    const made = await t.req('POST', '/api/tokens', { token: t.adminToken, body: { name: 'remembered', permissions: ['flag:read'] } })
    expect(made.body.lastUsedAt).toBeNull()
    const before = served.fallbackCalls()
    for (let i = 0; i < 3; i++)
      expect((await fetch(`${served.base}/api/flags/app/on`, { headers: { 'x-api-key': made.body.token } })).status).toBe(200)
    expect(served.fallbackCalls()).toBe(before)
    const shown = await t.req('GET', `/api/tokens/${made.body.id}`, { token: t.adminToken })
    expect(shown.body.lastUsedAt).toBeString()
  })
})

test('a path of no route is answered 404 by the fallback, alike in both routers', async () => {
  const before = served.fallbackCalls()
  const viaBun = await fetch(`${served.base}/api/nothing/here`, { headers: bearer('admin') })
  expect(served.fallbackCalls()).toBe(before + 1)
  const inProcess = await t.app.http.handle(new Request('http://localhost/api/nothing/here', { headers: bearer('admin') }), '127.0.0.1')
  expect(viaBun.status).toBe(404)
  expect(headersOf(viaBun)).toEqual(headersOf(inProcess))
  expect(await viaBun.text()).toBe(await inProcess.text())
})
