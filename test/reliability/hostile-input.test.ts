/**
 * Hostile input: property-based tests with fast-check send well over 10,000 random and
 * malformed bodies, headers and paths across every endpoint, plus import documents. Every answer
 * must be below 500, in the error envelope when it is an error, and a rejected request must leave
 * the state exactly as it was.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import fc from 'fast-check'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

setDefaultTimeout(120_000)
const RUNS = Number(process.env.HOSTILE_RUNS ?? 5000)

let t: TestApp
let tokens: string[]
beforeAll(async () => {
  t = await createTestApp()
  await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'h/int', type: 'INTEGER', maxValue: 10 } })
  await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'h/tag', type: 'TAG', enumValues: ['a', 'b'] } })
  const api = await t.req('POST', '/api/tokens', {
    token: t.adminToken,
    body: { name: 'hostile', permissions: ['flag:read', 'flag:write', 'token:write'], flagPrefixes: ['h/'] },
  })
  tokens = [t.adminToken, (await t.userWith(['flag:read'])).token, 'garbage', '', api.body.token]
})
afterAll(() => t.close())

const ROUTES: [string, string][] = [
  ['POST', '/api/login'],
  ['POST', '/api/logout'],
  ['GET', '/api/me'],
  ['GET', '/api/users'],
  ['POST', '/api/users'],
  ['GET', '/api/users/x'],
  ['PUT', '/api/users/x'],
  ['DELETE', '/api/users/x'],
  ['GET', '/api/flags'],
  ['POST', '/api/flags'],
  ['GET', '/api/flags/h/int'],
  ['PUT', '/api/flags/h/int'],
  ['PUT', '/api/flags/h/tag'],
  ['DELETE', '/api/flags/nope'],
  ['GET', '/api/sessions'],
  ['DELETE', '/api/sessions/x'],
  ['GET', '/api/tokens'],
  ['POST', '/ofrep/v1/evaluate/flags/h/int'],
  ['POST', '/ofrep/v1/evaluate/flags'],
  ['GET', '/api/audit'],
  ['POST', '/api/rollbacks'],
  ['POST', '/api/tokens'],
  ['GET', '/api/tokens/x'],
  ['DELETE', '/api/tokens/x'],
  ['GET', '/api/migrations/export'],
  ['PUT', '/api/migrations'],
  ['PATCH', '/api/migrations'],
  ['GET', '/migration/export'],
  ['GET', '/health'],
  ['GET', '/metrics'],
  ['GET', '/api/openapi.json'],
]

const nasty = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty'),
  fc.string({ maxLength: 20 }),
  fc.constantFrom(
    'name',
    'type',
    'value',
    'valueExists',
    'defaultValue',
    'minValue',
    'maxValue',
    'enumValues',
    'regexPattern',
    'username',
    'password',
    'permissions',
    'flagPrefixes',
    'expiresAt',
    'context',
    'targetingKey',
    'revision',
    'url',
    'flags',
    'environment',
    'version',
    'createdAt',
  ),
)
const leaf = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(1e308, -1e308, 2 ** 53, -(2 ** 53), 0.1, -0, 1e-320, 'NaN'),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 40 }),
  fc.constantFrom(
    'INTEGER',
    'BOOLEAN',
    'TAG',
    'AB-TEST',
    'A',
    'B',
    '^(a+)+$',
    '(a)\\1',
    'http://127.0.0.1/',
    'file:///etc/passwd',
    'flag:read',
  ),
)
const json = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 5 }),
  object: fc.dictionary(nasty, tie('value'), { maxKeys: 6 }),
})).value

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth)
const rawBody = fc.oneof(
  json.map((v) => JSON.stringify(v) ?? 'null'),
  fc.constantFrom(
    '{',
    '{"a":',
    '[1,]',
    '\u0000',
    '{"__proto__":{"admin":true}}',
    nested(40),
    `{"a":${nested(31)}}`,
    '1e999999',
    '"\\ud800"',
    'true',
  ),
  fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b).toString('latin1')),
  fc.string({ maxLength: 200 }),
)
const contentType = fc.oneof(
  fc.constant('application/json'),
  fc.constant('application/json; charset=utf-8'),
  fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', '', 'application/jsonx', 'APPLICATION/JSON'),
)
const headerValue = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom('Bearer', 'Bearer ', 'Bearer a.b.c', 'bearer x', `Bearer ${'a'.repeat(5000)}`),
)
const pathNoise = fc.oneof(
  fc.constant(''),
  fc.constantFrom(
    '/',
    '//',
    '/./',
    '/../',
    '%2F',
    '%2e%2e',
    '%00',
    '%zz',
    '?x=1',
    '?prefix=',
    '?mode=replace',
    '?dryRun=true',
    '?prefix=%FF',
    '#frag',
  ),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
)

interface Attempt {
  route: [string, string]
  token: string
  body: string | Uint8Array | undefined
  type: string
  noise: string
  ifMatch: string | undefined
  requestId: string | undefined
  apiKey: string | undefined
}

const attempt: fc.Arbitrary<Attempt> = fc.record({
  route: fc.constantFrom(...ROUTES),
  token: fc.oneof(
    fc.constantFrom(...[0, 1, 2, 3, 4]).map((i) => i as unknown as string),
    headerValue,
  ),
  apiKey: fc.option(
    fc.oneof(
      fc.constant(4).map((i) => i as unknown as string),
      headerValue,
    ),
    { nil: undefined },
  ),
  body: fc.option(fc.oneof(rawBody, fc.uint8Array({ maxLength: 32 })), { nil: undefined }),
  type: contentType,
  noise: pathNoise,
  ifMatch: fc.option(headerValue, { nil: undefined }),
  requestId: fc.option(headerValue, { nil: undefined }),
})

async function send(a: Attempt) {
  const [method, path] = a.route
  const token = typeof a.token === 'number' ? tokens[a.token] : a.token
  const headers: Record<string, string> = {}
  const put = (k: string, v: string | undefined) => {
    if (v !== undefined && /^[\t\x20-\x7e\x80-\xff]*$/.test(v)) headers[k] = v
  }
  put('authorization', token ? (token.startsWith('Bearer') || token === tokens[2] ? token : `Bearer ${token}`) : undefined)
  if (a.body !== undefined) put('content-type', a.type)
  put('x-api-key', typeof a.apiKey === 'number' ? tokens[a.apiKey] : a.apiKey)
  put('if-match', a.ifMatch)
  put('x-request-id', a.requestId)
  const state = () => {
    const c = t.app.store.committed()
    return JSON.stringify([[...c.flags.values()], [...c.users.values()], [...c.tokens.values()]])
  }
  const before = state()
  let url: string
  try {
    url = new URL(`http://localhost${path}${a.noise}`).href
  } catch {
    url = `http://localhost${path}`
  }
  const res = await t.app.http.handle(new Request(url, { method, headers, body: a.body }))
  const text = await res.text()
  return { res, text, before, after: state() }
}

test(`${RUNS * 4} hostile requests: never 5xx, always the envelope, rejections change nothing`, async () => {
  let count = 0
  for (let round = 0; round < 4; round++) {
    await fc.assert(
      fc.asyncProperty(attempt, async (a) => {
        const { res, text, before, after } = await send(a)
        count++
        expect(res.status).toBeLessThan(500)
        expect(res.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._-]{1,128}$/)
        if (res.status >= 400) {
          const body = JSON.parse(text)
          // OFREP evaluation problems (400, 404) use the protocol's own body; everything else the envelope
          const ofrep = a.route[1].startsWith('/ofrep/') && (res.status === 400 || res.status === 404) && body.errorCode !== undefined
          if (ofrep) expect(typeof body.errorDetails).toBe('string')
          else {
            expect(typeof body.error.code).toBe('string')
            expect(typeof body.error.message).toBe('string')
          }
          expect(text).not.toMatch(/at \w+ \(|\.ts:\d+:\d+/)
          expect(after).toBe(before)
        }
      }),
      { numRuns: RUNS },
    )
  }
  expect(count).toBeGreaterThanOrEqual(RUNS * 4)
  expect(({} as Record<string, unknown>).admin).toBeUndefined()
})

test('random import documents: never 5xx; invalid ones change nothing and list their errors', async () => {
  const flagDoc = fc.record(
    {
      environment: fc.oneof(fc.string({ maxLength: 10 }), leaf),
      version: fc.oneof(fc.constantFrom('1.0.0', '1.7.1', '2.0.0', '1.0', ''), leaf),
      createdAt: fc.oneof(fc.constant('2026-11-22T10:15:00.123Z'), leaf),
      flags: fc.oneof(fc.dictionary(fc.oneof(nasty, fc.constantFrom('a', 'a/b', 'a/b/c', 'x'.repeat(70))), json, { maxKeys: 5 }), leaf),
    },
    { requiredKeys: [] },
  )
  await fc.assert(
    fc.asyncProperty(flagDoc, fc.constantFrom('', '?mode=replace', '?values=keep', '?dryRun=true'), async (doc, query) => {
      const before = JSON.stringify([...t.app.store.committed().flags.values()])
      const res = await t.req('PUT', `/api/migrations${query}`, { token: t.adminToken, body: doc })
      expect(res.status).toBeLessThan(500)
      if (res.status === 400) {
        expect(Array.isArray(res.body.error.details?.errors) || typeof res.body.error.details?.field === 'string').toBe(true)
        expect(JSON.stringify([...t.app.store.committed().flags.values()])).toBe(before)
      }
    }),
    { numRuns: Math.max(500, RUNS / 2) },
  )
})
