/** docs/openfeature.md#ofrep over HTTP: OFREP single and bulk evaluation, their errors, ETags and scoping. */

import { expect, test } from 'bun:test'
import { splitVariant } from '../../src/domain/evaluation.ts'
import { createTestApp, scenarioGroup, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
let app: string // an evaluation-only API token
const group = scenarioGroup(
  async () => {
    t = await createTestApp()
    const flags = [
      { name: 'f/bool', type: 'BOOLEAN', value: true },
      { name: 'f/int', type: 'INTEGER', defaultValue: 3 },
      { name: 'f/str', type: 'STRING', value: 'hello' },
      { name: 'f/enum', type: 'ENUM', enumValues: ['red', 'green'], defaultValue: 'green' },
      { name: 'f/tag', type: 'TAG', enumValues: ['a', 'b', 'c'], value: ['a', 'c'] },
      { name: 'f/ab', type: 'AB-TEST', chancePercentB: 50 },
      { name: 'f/ab-pinned', type: 'AB-TEST', value: 'B' },
      { name: 'other/x', type: 'BOOLEAN' },
    ]
    for (const body of flags) expect((await t.req('POST', '/api/flags', { token: t.adminToken, body })).status).toBe(201)
    app = (await t.req('POST', '/api/tokens', { token: t.adminToken, body: { name: 'app', permissions: ['flag:evaluate'] } })).body.token
  },
  () => t.close(),
)

const evaluate = (key: string, body?: unknown, token = app, headers: Record<string, string> = {}) =>
  t.req('POST', `/ofrep/v1/evaluate/flags/${key}`, { token, ...(body === undefined ? {} : { body }), headers })

group('POST /ofrep/v1/evaluate/flags/{key}', () => {
  test('every type evaluates by the table, with metadata', async () => {
    const expected: Record<string, unknown> = {
      'f/bool': { value: true, reason: 'STATIC', variant: 'value', metadata: { type: 'BOOLEAN', revision: 1 } },
      'f/int': { value: 3, reason: 'DEFAULT', variant: 'default', metadata: { type: 'INTEGER', revision: 1 } },
      'f/str': { value: 'hello', reason: 'STATIC', variant: 'value' },
      'f/enum': { value: 'green', reason: 'DEFAULT', variant: 'default' },
      'f/tag': { value: ['a', 'c'], reason: 'STATIC', variant: 'value' },
      'f/ab-pinned': { value: 'B', reason: 'STATIC', variant: 'B' },
      'f/ab': { value: 'A', reason: 'DEFAULT', variant: 'A' },
    }
    for (const [key, want] of Object.entries(expected)) {
      const res = await evaluate(key, { context: {} })
      expect(res.status, key).toBe(200)
      expect(res.body, key).toMatchObject({ key, ...(want as object) })
      expect(res.headers.get('content-type')).toStartWith('application/json')
    }
  })

  test('an A/B test splits on targetingKey, sticky, as the assignment rule says', async () => {
    for (let i = 0; i < 40; i++) {
      const targetingKey = `user-${i}`
      const first = await evaluate('f/ab', { context: { targetingKey, plan: 'pro' } })
      expect(first.body).toMatchObject({ reason: 'SPLIT', value: splitVariant('f/ab', targetingKey, 50) })
      expect(first.body.variant).toBe(first.body.value)
      expect((await evaluate('f/ab', { context: { targetingKey } })).body.value).toBe(first.body.value)
    }
  })

  test('empty, {} and null contexts, unknown fields and query parameters are all fine', async () => {
    const variants = [
      () => t.req('POST', '/ofrep/v1/evaluate/flags/f/bool', { token: app }),
      () => t.req('POST', '/ofrep/v1/evaluate/flags/f/bool', { token: app, rawBody: '', headers: { 'content-type': 'application/json' } }),
      () => evaluate('f/bool', {}),
      () => evaluate('f/bool', { context: null }),
      () => evaluate('f/bool?cache=1&x=2', { context: {}, future: true }),
      () =>
        t.req('POST', '/ofrep/v1/evaluate/flags/f/bool', {
          token: app,
          rawBody: '{"context":{}}',
          headers: { 'content-type': 'text/plain' },
        }),
    ]
    for (const send of variants) {
      const res = await send()
      expect(res.status).toBe(200)
      expect(res.body.value).toBe(true)
    }
  })

  test('a key with / literal or as %2F', async () => {
    expect((await evaluate('f%2Fbool', {})).body.key).toBe('f/bool')
  })

  test('problems get OFREP error bodies: FLAG_NOT_FOUND, PARSE_ERROR, INVALID_CONTEXT', async () => {
    const missing = await evaluate('f/none', {})
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual({ key: 'f/none', errorCode: 'FLAG_NOT_FOUND', errorDetails: expect.any(String) })
    const bad = await t.req('POST', '/ofrep/v1/evaluate/flags/f/bool', {
      token: app,
      rawBody: '{"context":',
      headers: { 'content-type': 'application/json' },
    })
    expect(bad.status).toBe(400)
    expect(bad.body).toMatchObject({ key: 'f/bool', errorCode: 'PARSE_ERROR' })
    for (const body of [{ context: 'x' }, { context: [1] }, { context: 5 }, [1]]) {
      const res = await evaluate('f/bool', body)
      expect(res.status).toBe(400)
      expect(res.body).toMatchObject({ key: 'f/bool', errorCode: 'INVALID_CONTEXT' })
    }
    // a targeting key of another type is the caller's mistake (OFREP), named, on both routes
    for (const targetingKey of [42, true, null, ['u'], { id: 'u' }]) {
      const res = await evaluate('f/bool', { context: { targetingKey } })
      expect(res.status).toBe(400)
      expect(res.body).toMatchObject({ key: 'f/bool', errorCode: 'INVALID_CONTEXT', errorDetails: expect.stringContaining('targetingKey') })
      const bulk = await t.req('POST', '/ofrep/v1/evaluate/flags', { token: app, body: { context: { targetingKey } } })
      expect(bulk.status).toBe(400)
      expect(bulk.body).toMatchObject({ errorCode: 'INVALID_CONTEXT' })
    }
    const deep = await t.req('POST', '/ofrep/v1/evaluate/flags/f/bool', {
      token: app,
      rawBody: `{"context":${'['.repeat(40)}${']'.repeat(40)}}`,
      headers: { 'content-type': 'application/json' },
    })
    expect(deep.status).toBe(400)
    // a compressed body is a PARSE_ERROR that says why, on the single and the bulk route
    for (const path of ['/ofrep/v1/evaluate/flags/f/bool', '/ofrep/v1/evaluate/flags']) {
      const rawBody = Bun.gzipSync(new TextEncoder().encode('{"context":{}}'))
      const gz = await t.req('POST', path, {
        token: app,
        rawBody,
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      })
      expect(gz.status).toBe(400)
      expect(gz.body.errorCode).toBe('PARSE_ERROR')
      expect(gz.body.errorDetails).toContain('Content-Encoding: gzip')
    }
  })

  test('credentials and permissions are checked first, in the usual envelope', async () => {
    const none = await t.req('POST', '/ofrep/v1/evaluate/flags/f/bool', {})
    expect(none.status).toBe(401)
    expect(none.body.error.code).toBe('UNAUTHORIZED')
    const writer = (await t.req('POST', '/api/tokens', { token: t.adminToken, body: { name: 'writer', permissions: ['flag:write'] } })).body
      .token
    const denied = await evaluate('f/bool', {}, writer)
    expect(denied.status).toBe(403)
    expect(denied.body.error.details.required).toBe('flag:evaluate')
    const reader = await t.userWith(['flag:read'])
    expect((await evaluate('f/bool', {}, reader.token)).status).toBe(200) // flag:read grants evaluation, with a session too
  })

  test('a scoped token: flags outside its prefixes are FLAG_NOT_FOUND', async () => {
    const scoped = (
      await t.req('POST', '/api/tokens', {
        token: t.adminToken,
        body: { name: 'scoped', permissions: ['flag:evaluate'], flagPrefixes: ['f/'] },
      })
    ).body.token
    expect((await evaluate('other/x', {}, scoped)).body.errorCode).toBe('FLAG_NOT_FOUND')
    expect((await evaluate('f/bool', {}, scoped)).status).toBe(200)
  })

  test('evaluations never write', async () => {
    const before = t.app.store.writes
    for (let i = 0; i < 20; i++) await evaluate('f/ab', { context: { targetingKey: `k${i}` } })
    await t.req('POST', '/ofrep/v1/evaluate/flags', { token: app, body: {} })
    expect(t.app.store.writes).toBe(before)
  })
})

group('POST /ofrep/v1/evaluate/flags (bulk)', () => {
  const bulk = (body: unknown, token = app, headers: Record<string, string> = {}) =>
    t.req('POST', '/ofrep/v1/evaluate/flags', { token, body, headers })

  test('every visible flag, sorted by key, with the event stream advertised', async () => {
    const res = await bulk({ context: { targetingKey: 'user-7' } })
    expect(res.status).toBe(200)
    const keys = res.body.flags.map((f: { key: string }) => f.key)
    expect(keys).toEqual([...keys].sort())
    expect(keys).toContain('other/x')
    expect(res.body.flags.find((f: { key: string }) => f.key === 'f/ab')).toMatchObject({
      reason: 'SPLIT',
      value: splitVariant('f/ab', 'user-7', 50),
    })
    expect(res.body.eventStreams).toEqual([
      {
        type: 'sse',
        endpoint: { requestUri: expect.stringMatching(/^\/ofrep\/v1\/events\?ticket=[A-Za-z0-9._-]+$/) },
        inactivityDelaySec: 120,
      },
    ])
    expect(res.headers.get('etag')).toMatch(/^"/)
  })

  test('ETag: stable while nothing changes, 304 on If-None-Match, new after any change or another context', async () => {
    const first = await bulk({ context: { targetingKey: 'u1' } })
    const etag = first.headers.get('etag') as string
    expect((await bulk({ context: { targetingKey: 'u1', other: 'ignored' } })).headers.get('etag')).toBe(etag)
    const again = await bulk({ context: { targetingKey: 'u1' } }, app, { 'if-none-match': etag })
    expect(again.status).toBe(304)
    expect(again.text).toBe('')
    expect(again.headers.get('etag')).toBe(etag)
    expect((await bulk({ context: { targetingKey: 'u2' } }, app, { 'if-none-match': etag })).status).toBe(200)
    // `*` says nothing about this context's answer: only an equal tag is a 304
    const star = await bulk({ context: { targetingKey: 'u1' } }, app, { 'if-none-match': '*' })
    expect(star.status).toBe(200)
    expect((await bulk({ context: { targetingKey: 'u1' } }, app, { 'if-none-match': `"nope", ${etag}` })).status).toBe(304)
    await t.req('PUT', '/api/flags/other/x', { token: t.adminToken, body: { value: true } })
    const changed = await bulk({ context: { targetingKey: 'u1' } }, app, { 'if-none-match': etag })
    expect(changed.status).toBe(200)
    expect(changed.headers.get('etag')).not.toBe(etag)
  })

  test('a scoped token sees only its flags, under its own ETag', async () => {
    const scoped = (
      await t.req('POST', '/api/tokens', {
        token: t.adminToken,
        body: { name: 'bulk-scoped', permissions: ['flag:evaluate'], flagPrefixes: ['f/'] },
      })
    ).body.token
    const mine = await bulk({}, scoped)
    expect(mine.body.flags.every((f: { key: string }) => f.key.startsWith('f/'))).toBe(true)
    expect(mine.headers.get('etag')).not.toBe((await bulk({})).headers.get('etag'))
  })

  test('bad bodies get OFREP error bodies without a key', async () => {
    const res = await t.req('POST', '/ofrep/v1/evaluate/flags', {
      token: app,
      rawBody: 'nope',
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ errorCode: 'PARSE_ERROR', errorDetails: expect.any(String) })
  })
})

group('conditional reads and CORS', () => {
  test('GET /api/flags/{name} and GET /api/flags honour If-None-Match', async () => {
    const one = await t.req('GET', '/api/flags/f/bool', { token: t.adminToken })
    const etag = one.headers.get('etag') as string
    expect((await t.req('GET', '/api/flags/f/bool', { token: t.adminToken, headers: { 'if-none-match': etag } })).status).toBe(304)
    expect((await t.req('GET', '/api/flags/f/bool', { token: t.adminToken, headers: { 'if-none-match': `W/${etag}` } })).status).toBe(304)
    expect((await t.req('GET', '/api/flags/f/bool', { token: t.adminToken, headers: { 'if-none-match': '"999"' } })).status).toBe(200)
    const list = await t.req('GET', '/api/flags?prefix=f/', { token: t.adminToken })
    const listTag = list.headers.get('etag') as string
    expect(listTag).toMatch(/^"/)
    expect((await t.req('GET', '/api/flags?prefix=f/', { token: t.adminToken, headers: { 'if-none-match': listTag } })).status).toBe(304)
    await t.req('PUT', '/api/flags/f/int', { token: t.adminToken, body: { value: 4 } })
    expect((await t.req('GET', '/api/flags?prefix=f/', { token: t.adminToken, headers: { 'if-none-match': listTag } })).status).toBe(200)
  })

  test('no CORS headers at all unless cors.origins is set', async () => {
    const res = await t.req('POST', '/ofrep/v1/evaluate/flags/f/bool', {
      token: app,
      body: {},
      headers: { origin: 'https://app.example.com' },
    })
    expect(res.headers.get('access-control-allow-origin')).toBeNull()
    expect(
      (
        await t.req('OPTIONS', '/ofrep/v1/evaluate/flags', {
          headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
        })
      ).status,
    ).toBe(405)
  })
})

test('CORS: a listed origin gets the headers and its preflight answered 204; another gets none', async () => {
  const c = await createTestApp({ FLAGD_CORS_ORIGINS: 'https://app.example.com' })
  try {
    const pre = await c.req('OPTIONS', '/ofrep/v1/evaluate/flags', {
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'x-api-key, content-type',
      },
    })
    expect(pre.status).toBe(204)
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
    expect(pre.headers.get('access-control-allow-methods')).toContain('POST')
    for (const h of ['Authorization', 'Content-Type', 'If-None-Match', 'If-Match', 'X-API-Key', 'X-Request-Id'])
      expect(pre.headers.get('access-control-allow-headers')).toContain(h)
    expect(Number(pre.headers.get('access-control-max-age'))).toBeGreaterThan(0)
    expect(pre.headers.get('vary')).toBe('Origin')
    const real = await c.req('GET', '/api/me', { token: c.adminToken, headers: { origin: 'https://app.example.com' } })
    expect(real.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
    for (const h of ['ETag', 'Location', 'X-Request-Id', 'Retry-After'])
      expect(real.headers.get('access-control-expose-headers')).toContain(h)
    expect(real.headers.get('vary')).toBe('Origin')
    const error = await c.req('GET', '/api/me', { headers: { origin: 'https://app.example.com' } })
    expect(error.status).toBe(401)
    expect(error.headers.get('access-control-allow-origin')).toBe('https://app.example.com')
    const other = await c.req('GET', '/api/me', { token: c.adminToken, headers: { origin: 'https://evil.example.com' } })
    expect(other.headers.get('access-control-allow-origin')).toBeNull()
    const otherPre = await c.req('OPTIONS', '/api/me', {
      headers: { origin: 'https://evil.example.com', 'access-control-request-method': 'GET' },
    })
    expect(otherPre.headers.get('access-control-allow-origin')).toBeNull()
    expect(otherPre.status).not.toBe(204)
  } finally {
    await c.close()
  }
})

test('CORS: "*" allows any origin', async () => {
  const c = await createTestApp({ FLAGD_CORS_ORIGINS: '*' })
  try {
    const res = await c.req('GET', '/health', { headers: { origin: 'https://anything.example' } })
    expect(res.headers.get('access-control-allow-origin')).toBe('*')
  } finally {
    await c.close()
  }
})

test('bulk answers for many contexts stay within the cache budget (a browser token cannot fill memory)', async () => {
  const BUDGET = 16 * 1024 * 1024
  const a = await createTestApp({ FLAGD_LIMITS_CACHE_BYTES: String(BUDGET) })
  const kept = () => a.app.services.cache.size().regions['bulk-answers'] ?? { entries: 0, bytes: 0 }
  try {
    // 2,000 flags with 200-character names: each bulk answer is over half a megabyte
    const flags: Record<string, unknown> = {}
    for (let i = 0; i < 2000; i++)
      flags[`${'n'.repeat(60)}/${'m'.repeat(60)}/${'o'.repeat(60)}/f${String(i).padStart(5, '0')}`] = { type: 'AB-TEST' }
    const doc = { environment: 'load', version: '1.0.0', createdAt: '2026-11-24T00:00:00.000Z', flags }
    expect((await a.req('PUT', '/api/migrations', { token: a.adminToken, body: doc })).status).toBe(200)
    const evaluator = (
      await a.req('POST', '/api/tokens', { token: a.adminToken, body: { name: 'browser', permissions: ['flag:evaluate'] } })
    ).body.token
    let size = 0
    const ask = (i: number) =>
      a.req('POST', '/ofrep/v1/evaluate/flags', {
        headers: { 'x-api-key': evaluator },
        body: { context: { targetingKey: `visitor-${i}` } },
      })
    // a context asked for once is not kept (one-off visitors would only push useful answers out)
    expect((await ask(-1)).status).toBe(200)
    expect(kept().entries).toBe(0)
    // twice the budget's worth of answers (each over half a megabyte): the budget must evict
    const CONTEXTS = Math.ceil((2 * BUDGET) / 500_000)
    for (let i = 0; i < CONTEXTS; i++) {
      // each asked twice, as a poller would: the second answer is kept, within the budget
      expect((await ask(i)).status).toBe(200)
      const res = await ask(i)
      expect(res.status).toBe(200)
      size = res.text.length
    }
    const cached = kept()
    expect(cached.entries).toBeGreaterThan(0)
    expect(size).toBeGreaterThan(500_000)
    expect(a.app.services.cache.size().bytes).toBeLessThanOrEqual(BUDGET)
    expect(cached.entries).toBeLessThan(CONTEXTS) // the oldest went
  } finally {
    await a.close()
  }
})

test('an OFREP body nested deeper than 32 levels is refused, even where OFREP ignores the field', async () => {
  const a = await createTestApp()
  try {
    let deep: unknown = 1
    for (let i = 0; i < 32; i++) deep = { d: deep } // with the body itself: 33 levels
    const res = await a.req('POST', '/ofrep/v1/evaluate/flags', { token: a.adminToken, body: { context: {}, ignored: deep } })
    expect(res.status).toBe(400)
    expect(res.body).toEqual({ errorCode: 'PARSE_ERROR', errorDetails: 'the body is nested deeper than 32 levels' })
  } finally {
    await a.close()
  }
})
