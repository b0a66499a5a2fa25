/** docs/api.md#conventions: the envelope, content types, limits, unknown fields, headers, routing before auth. */

import { expect, test } from 'bun:test'
import { createTestApp, scenarioGroup, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
const group = scenarioGroup(
  async () => {
    t = await createTestApp()
  },
  () => t.close(),
)

function expectEnvelope(body: any, code: string) {
  expect(body).toBeObject()
  expect(body.error.code).toBe(code)
  expect(typeof body.error.message).toBe('string')
  expect(body.error.message.length).toBeGreaterThan(0)
  expect(JSON.stringify(body)).not.toMatch(/at \w+ \(|\.ts:\d+/) // no stack trace
}

const nested = (levels: number) => `{"username":${'['.repeat(levels - 1)}${']'.repeat(levels - 1)},"password":"x"}`

group('error rows of docs/api.md#conventions', () => {
  const cases: {
    name: string
    method: string
    path: string
    auth?: boolean
    headers?: Record<string, string>
    raw?: string
    status: number
    code: string
    field?: string
  }[] = [
    { name: 'unknown route without token', method: 'GET', path: '/api/nope', status: 404, code: 'NOT_FOUND' },
    { name: 'unknown route with token', method: 'GET', path: '/api/nope', auth: true, status: 404, code: 'NOT_FOUND' },
    { name: 'unknown nested route', method: 'DELETE', path: '/api/users/a/b', auth: true, status: 404, code: 'NOT_FOUND' },
    { name: 'wrong method', method: 'PATCH', path: '/api/users', auth: true, status: 405, code: 'METHOD_NOT_ALLOWED' },
    { name: 'wrong method without token', method: 'DELETE', path: '/api/users', status: 405, code: 'METHOD_NOT_ALLOWED' },
    {
      name: 'body without content type',
      method: 'POST',
      path: '/api/users',
      auth: true,
      raw: '{"username":"x"}',
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    },
    {
      name: 'body as text/plain',
      method: 'POST',
      path: '/api/login',
      headers: { 'content-type': 'text/plain' },
      raw: '{}',
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    },
    {
      name: 'invalid JSON',
      method: 'POST',
      path: '/api/login',
      headers: { 'content-type': 'application/json' },
      raw: '{"username":',
      status: 400,
      code: 'INVALID_REQUEST',
    },
    {
      name: 'empty body',
      method: 'POST',
      path: '/api/login',
      headers: { 'content-type': 'application/json' },
      raw: '',
      status: 400,
      code: 'INVALID_REQUEST',
    },
    {
      name: 'JSON array instead of object',
      method: 'POST',
      path: '/api/login',
      headers: { 'content-type': 'application/json' },
      raw: '[]',
      status: 400,
      code: 'INVALID_REQUEST',
    },
    {
      name: 'nesting of 33 levels',
      method: 'POST',
      path: '/api/login',
      headers: { 'content-type': 'application/json' },
      raw: nested(33),
      status: 400,
      code: 'INVALID_REQUEST',
      field: 'body',
    },
    {
      name: 'nesting of 32 levels passes the depth check',
      method: 'POST',
      path: '/api/login',
      headers: { 'content-type': 'application/json' },
      raw: nested(32),
      status: 400,
      code: 'INVALID_REQUEST',
      field: 'username',
    },
    {
      name: 'unknown body field',
      method: 'POST',
      path: '/api/login',
      headers: { 'content-type': 'application/json' },
      raw: '{"username":"a","password":"b","remember":true}',
      status: 400,
      code: 'INVALID_REQUEST',
      field: 'remember',
    },
    {
      name: 'unknown query parameter',
      method: 'GET',
      path: '/api/users?limit=5',
      auth: true,
      status: 400,
      code: 'INVALID_REQUEST',
      field: 'limit',
    },
    {
      name: 'missing required field',
      method: 'POST',
      path: '/api/login',
      headers: { 'content-type': 'application/json' },
      raw: '{"password":"b"}',
      status: 400,
      code: 'INVALID_REQUEST',
      field: 'username',
    },
    {
      name: 'wrong field type',
      method: 'POST',
      path: '/api/login',
      headers: { 'content-type': 'application/json' },
      raw: '{"username":1,"password":"b"}',
      status: 400,
      code: 'INVALID_REQUEST',
      field: 'username',
    },
  ]
  for (const c of cases) {
    test(c.name, async () => {
      const res = await t.req(c.method, c.path, { rawBody: c.raw, headers: c.headers, token: c.auth ? t.adminToken : undefined })
      expect(res.status).toBe(c.status)
      expectEnvelope(res.body, c.code)
      if (c.field) expect(res.body.error.details.field).toBe(c.field)
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8')
    })
  }

  test('405 lists the allowed methods', async () => {
    const res = await t.req('PUT', '/api/users')
    expect(res.headers.get('allow')).toBe('GET, POST')
    const one = await t.req('POST', '/api/users/some-id')
    expect(one.status).toBe(405)
    expect(one.headers.get('allow')).toBe('DELETE, GET, PUT')
  })

  test('values that break naive error formatting are a 400, not a 500', async () => {
    for (const raw of [
      '{"username":{"toString":false}}',
      '{"username":{"valueOf":1,"toString":1},"password":"x"}',
      '{"username":"a","password":{"toString":null}}',
    ]) {
      const res = await t.req('POST', '/api/login', { rawBody: raw, headers: { 'content-type': 'application/json' } })
      expect(res.status).toBe(400)
      expectEnvelope(res.body, 'INVALID_REQUEST')
    }
    const users = await t.req('POST', '/api/users', {
      token: t.adminToken,
      rawBody: '{"username":{"toString":false},"password":"x"}',
      headers: { 'content-type': 'application/json' },
    })
    expect(users.status).toBe(400)
  })

  test('a compressed body is refused with 415 naming the coding, gzip or mislabelled alike; identity passes', async () => {
    const json = JSON.stringify({ username: 'carol', password: 'carol-password' })
    for (const [coding, raw] of [
      ['gzip', Bun.gzipSync(new TextEncoder().encode(json))],
      ['gzip', json], // a plain body labelled gzip must not be taken as plain
      ['identity, br', json],
    ] as const) {
      const res = await t.req('POST', '/api/users', {
        token: t.adminToken,
        rawBody: raw,
        headers: { 'content-type': 'application/json', 'content-encoding': coding },
      })
      expect(res.status).toBe(415)
      expectEnvelope(res.body, 'UNSUPPORTED_MEDIA_TYPE')
      expect(res.body.error.details).toEqual({ field: 'Content-Encoding', reason: 'only identity is accepted' })
      expect(res.body.error.message).toContain(coding === 'gzip' ? 'gzip' : 'br')
      expect(res.headers.get('accept-encoding')).toBe('identity')
    }
    expect((await t.req('GET', '/api/users', { token: t.adminToken })).body.some((u: { username: string }) => u.username === 'carol')).toBe(
      false,
    )
    const plain = await t.req('POST', '/api/users', {
      token: t.adminToken,
      rawBody: json,
      headers: { 'content-type': 'application/json', 'content-encoding': 'identity' },
    })
    expect(plain.status).toBe(201)
  })

  test('invalid UTF-8 is a 400', async () => {
    const bytes = new Uint8Array([0x7b, 0x22, 0x75, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])
    const res = await t.req('POST', '/api/login', { rawBody: bytes, headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(400)
    expectEnvelope(res.body, 'INVALID_REQUEST')
  })

  test('the message never echoes the whole body', async () => {
    const secret = 'x'.repeat(500)
    const res = await t.req('POST', '/api/login', { body: { username: 'a', password: 'b', [secret]: 1 } })
    expect(res.status).toBe(400)
    expect(res.body.error.message.length).toBeLessThan(700)
  })
})

group('body size limits', () => {
  test('a body over 1 MiB is 413 even with a valid token', async () => {
    const big = JSON.stringify({ username: 'a'.repeat(1024 * 1024), password: 'x' })
    const res = await t.req('POST', '/api/users', { token: t.adminToken, rawBody: big, headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(413)
    expectEnvelope(res.body, 'PAYLOAD_TOO_LARGE')
  })

  test('a streamed body without Content-Length is cut at the limit', async () => {
    const chunk = new TextEncoder().encode('a'.repeat(64 * 1024))
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 40) controller.enqueue(chunk)
        else controller.close()
      },
    })
    const res = await t.app.http.handle(
      new Request('http://localhost/api/login', { method: 'POST', body: stream, headers: { 'content-type': 'application/json' } }),
    )
    expect(res.status).toBe(413)
  })

  test('a streamed login body over 64 KiB is a bad credential, answered without keeping it', async () => {
    const chunk = new TextEncoder().encode(`{"username":"admin","password":"${'p'.repeat(16 * 1024)}`)
    let sent = 0
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 6) controller.enqueue(sent === 1 ? chunk : new TextEncoder().encode('p'.repeat(16 * 1024)))
        else {
          controller.enqueue(new TextEncoder().encode('"}'))
          controller.close()
        }
      },
    })
    const res = await t.app.http.handle(
      new Request('http://localhost/api/login', { method: 'POST', body: stream, headers: { 'content-type': 'application/json' } }),
    )
    expect(res.status).toBe(401)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED')
  })

  test('a body just under the limit is read', async () => {
    const res = await t.req('POST', '/api/login', { body: { username: 'a', password: 'b'.repeat(1024 * 1024 - 100) } })
    expect(res.status).toBe(401)
  })
})

group('headers on every answer', () => {
  const paths = [
    ['GET', '/health'],
    ['GET', '/api/nope'],
    ['GET', '/api/users'],
    ['POST', '/api/login'],
  ] as const
  for (const [method, path] of paths) {
    test(`${method} ${path}`, async () => {
      const res = await t.req(method, path, { body: method === 'POST' ? {} : undefined })
      expect(res.headers.get('cache-control')).toBe('no-store')
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._-]{1,128}$/)
    })
  }

  test('a well-formed X-Request-Id is echoed, a bad one replaced', async () => {
    const ok = await t.req('GET', '/health', { headers: { 'x-request-id': 'abc.DEF_123-x' } })
    expect(ok.headers.get('x-request-id')).toBe('abc.DEF_123-x')
    for (const bad of ['has space', 'a'.repeat(129), 'semi;colon', '']) {
      const res = await t.req('GET', '/health', { headers: { 'x-request-id': bad } })
      expect(res.headers.get('x-request-id')).not.toBe(bad)
      expect(res.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._-]{1,128}$/)
    }
  })

  test('401 sends WWW-Authenticate: Bearer', async () => {
    const res = await t.req('GET', '/api/users')
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe('Bearer')
  })

  test('a trailing slash reaches the same route', async () => {
    const res = await t.req('GET', '/api/users/', { token: t.adminToken })
    expect(res.status).toBe(200)
  })
})

group('health (docs/operations.md)', () => {
  test('GET /health', async () => {
    const res = await t.req('GET', '/health')
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ status: 'ok', version: expect.any(String), flags: 0 })
  })
})

group('routing depends on the path alone (docs/api.md#conventions)', () => {
  test.each(['x', 'ab', 'api', 'a.b', 'h'.repeat(300), '127.0.0.1:8080', '[::1]:8080'])('Host %s', async (host) => {
    const created = await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'host/f0002', type: 'BOOLEAN' } })
    expect([201, 409]).toContain(created.status)
    // a prefix before /api must never reach the API, whatever the Host
    const del = await t.req('DELETE', '/zz/api/flags/host/f0002', { token: t.adminToken, host })
    expect(del.status).toBe(404)
    expect((await t.req('GET', '/ab/migration/export', { host })).status).toBe(404)
    const got = await t.req('GET', '/api/flags/host/f0002', { token: t.adminToken, host })
    expect(got.status).toBe(200)
    expect(got.body.name).toBe('host/f0002')
  })
})

group('prototype keys are refused in every body (docs/api.md#conventions)', () => {
  test.each<[string, string, string, string]>([
    ['PUT', '/api/flags/proto/f', '{"__proto__":{"value":true}}', '__proto__'],
    ['PUT', '/api/flags/proto/f', '{"description":"x","constructor":{"prototype":{}}}', 'constructor'],
    ['POST', '/api/flags', '{"name":"proto/g","type":"BOOLEAN","x":{"prototype":1}}', 'x.prototype'],
    ['POST', '/api/users', '{"username":"u1","password":"password1","__proto__":{}}', '__proto__'],
    ['POST', '/api/login', '{"username":"admin","password":"admin-password","__proto__":{}}', '__proto__'],
  ])('%s %s %s → 400 naming %s, nothing changes', async (method, path, raw, field) => {
    await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'proto/f', type: 'BOOLEAN' } })
    const before = (await t.req('GET', '/api/flags', { token: t.adminToken })).text
    const res = await t.req(method, path, { token: t.adminToken, rawBody: raw, headers: { 'content-type': 'application/json' } })
    expect(res.status).toBe(400)
    expect(res.body.error.details.field).toBe(field)
    expect((await t.req('GET', '/api/flags', { token: t.adminToken })).text).toBe(before)
  })
})
