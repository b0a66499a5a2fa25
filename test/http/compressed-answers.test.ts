/**
 * Compressed answers kept with their ETag (docs/architecture.md#caching): the same answer is
 * compressed once while it stays in the request cache, and every compressed answer is exactly its
 * caller's own answer compressed, across callers that differ in flag prefixes, environment and
 * permissions, reads of every route that keeps them, and changes between them. Driven through
 * the app's pipeline (`http.handle`), with a small cache so answers also evict one another.
 */

import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { RequestCache } from '../../src/domain/request-cache.ts'
import { type Coding, createCompressor, encode } from '../../src/http/compression.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

const ENVIRONMENTS = ['development', 'staging', 'production']
const PREFIXES = ['mobile/', 'web/', 'zzz/']
let t: TestApp
/** The callers a sequence picks from: the admin's session and tokens of differing scopes. */
const callers: string[] = []

beforeAll(async () => {
  t = await createTestApp({ FLAGD_LIMITS_CACHE_BYTES: String(1024 * 1024) })
  const admin = async (method: string, path: string, body: unknown, status: number) => {
    const res = await t.req(method, path, { token: t.adminToken, body })
    expect([res.status, res.text]).toEqual([status, expect.any(String)])
    return res.body
  }
  for (const env of ENVIRONMENTS.slice(1)) await admin('PUT', `/api/environments/${env}`, {}, 201)
  const flags = Object.fromEntries(
    PREFIXES.flatMap((p) => Array.from({ length: 60 }, (_, i) => [`${p}f${i}`, { type: 'STRING', value: `value of ${p}f${i}` }])),
  )
  await admin('PUT', '/api/migrations', { environment: 'development', version: '1.0.0', createdAt: '2026-11-27T00:00:00.000Z', flags }, 200)
  callers.push(t.adminToken)
  const scopes = [
    { permissions: ['flag:read', 'flag:evaluate', 'migration:read'] },
    { permissions: ['flag:read', 'flag:evaluate'], flagPrefixes: ['mobile/'] },
    { permissions: ['flag:read', 'flag:evaluate'], flagPrefixes: ['web/', 'zzz/'] },
    { permissions: ['flag:read@staging', 'flag:evaluate@staging'], environment: 'staging' },
    { permissions: ['flag:evaluate', 'migration:read'], environment: 'production' },
    { permissions: ['flag:read@production', 'flag:evaluate@production'], environment: 'production', flagPrefixes: ['web/'] },
  ]
  for (const [i, scope] of scopes.entries())
    callers.push((await admin('POST', '/api/tokens', { name: `caller ${i}`, ...scope }, 201)).token)
})
afterAll(async () => {
  await t?.close()
})

/** A read as sent through the pipeline, the body as it comes (no decompression). */
async function read(token: string, method: string, path: string, coding: Coding | 'identity', body?: unknown) {
  const res = await t.app.http.handle(
    new Request(`http://localhost${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'accept-encoding': coding, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  )
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) }
}

const kept = () => t.app.services.cache.size().regions['compressed-answers'] ?? { entries: 0, bytes: 0 }

test('the flagd export (signed in or public), the flag list and the OFREP bulk answer are compressed once while kept', async () => {
  const reads: [string, string, unknown][] = [
    ['GET', '/api/migrations/export?format=flagd', undefined],
    ['GET', '/api/flags', undefined],
    ['POST', '/ofrep/v1/evaluate/flags', { context: { targetingKey: 'u1' } }],
  ]
  for (const [method, path, body] of reads)
    for (const coding of ['gzip', 'br'] as const) {
      const before = kept().entries
      const first = await read(t.adminToken, method, path, coding, body)
      expect([first.status, first.headers.get('content-encoding')]).toEqual([200, coding])
      expect(kept().entries).toBe(before + 1)
      const again = await read(t.adminToken, method, path, coding, body)
      expect(again.bytes).toEqual(first.bytes)
      expect(kept().entries).toBe(before + 1)
    }
  expect(kept().bytes).toBeGreaterThan(0)
  // the public download of the same document is the same text: the kept encoding, not another
  const entries = kept().entries
  const signedIn = await read(t.adminToken, 'GET', '/api/migrations/export?format=flagd', 'gzip')
  const anonymous = await fetchPublic('/migration/export?format=flagd', 'gzip')
  expect([anonymous.status, anonymous.headers.get('content-encoding')]).toEqual([200, 'gzip'])
  expect(anonymous.bytes).toEqual(signedIn.bytes)
  expect(kept().entries).toBe(entries)
})

/** A read without a credential (the public export). */
async function fetchPublic(path: string, coding: Coding) {
  const res = await t.app.http.handle(new Request(`http://localhost${path}`, { headers: { 'accept-encoding': coding } }))
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) }
}

type Action =
  | { kind: 'list'; who: number; prefix: string; env: string | undefined; coding: Coding }
  | { kind: 'export'; who: number; env: string | undefined; coding: Coding }
  | { kind: 'bulk'; who: number; targetingKey: string; coding: Coding }
  | { kind: 'write'; flag: number; env: string; value: string }

const who = fc.nat(6)
const coding = fc.constantFrom<Coding>('gzip', 'br')
const env = fc.constantFrom(undefined, undefined, ...ENVIRONMENTS)
const actions: fc.Arbitrary<Action> = fc.oneof(
  {
    arbitrary: fc.record({ kind: fc.constant('list' as const), who, prefix: fc.constantFrom('', '', ...PREFIXES, 'w'), env, coding }),
    weight: 3,
  },
  { arbitrary: fc.record({ kind: fc.constant('export' as const), who, env, coding }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('bulk' as const), who, targetingKey: fc.constantFrom('u1', 'u2'), coding }), weight: 3 },
  {
    arbitrary: fc.record({
      kind: fc.constant('write' as const),
      flag: fc.nat(179),
      env: fc.constantFrom(...ENVIRONMENTS),
      value: fc.constantFrom('a', 'b', 'a much longer value than before'),
    }),
    weight: 1,
  },
)

/** The request an action makes, or undefined for a write. */
function requestOf(a: Action): [string, string, unknown] | undefined {
  const q = (params: Record<string, string | undefined>) => {
    const set = Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)
    return set.length === 0 ? '' : `?${new URLSearchParams(set)}`
  }
  if (a.kind === 'list') return ['GET', `/api/flags${q({ prefix: a.prefix || undefined, environment: a.env })}`, undefined]
  if (a.kind === 'export') return ['GET', `/api/migrations/export${q({ format: 'flagd', environment: a.env })}`, undefined]
  if (a.kind === 'bulk') return ['POST', '/ofrep/v1/evaluate/flags', { context: { targetingKey: a.targetingKey } }]
  return undefined
}

test('a compressed answer is always its own caller’s answer compressed, across scopes, environments and changes', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(actions, { minLength: 5, maxLength: 25 }), fc.boolean(), async (sequence, compressedFirst) => {
      for (const a of sequence) {
        const request = requestOf(a)
        if (request === undefined) {
          if (a.kind !== 'write') continue
          const name = `${PREFIXES[Math.floor(a.flag / 60)]}f${a.flag % 60}`
          const res = await t.req('PUT', `/api/flags/${name}?environment=${a.env}`, { token: t.adminToken, body: { value: a.value } })
          expect(res.status).toBe(200)
          continue
        }
        if (a.kind === 'write') continue
        const [method, path, body] = request
        const token = callers[a.who] as string
        const ask = (c: Coding | 'identity') => read(token, method, path, c, body)
        // either order: a kept answer may be found first, or made from the identity answer's read
        const zipped = compressedFirst ? await ask(a.coding) : undefined
        const plain = await ask('identity')
        const second = zipped ?? (await ask(a.coding))
        expect(second.status).toBe(plain.status)
        expect(second.headers.get('etag')).toBe(plain.headers.get('etag'))
        if (plain.status !== 200 || plain.bytes.byteLength < 4096) continue
        expect(second.headers.get('content-encoding')).toBe(a.coding)
        expect(second.bytes).toEqual(encode(plain.bytes, a.coding))
      }
    }),
    { numRuns: 40 },
  )
  expect(kept().bytes).toBeLessThanOrEqual(t.app.services.cache.maxBytes)
})

describe('the compressor', () => {
  const answer = (text: string, etag?: string) =>
    new Response(text, { headers: { 'content-type': 'application/json', ...(etag ? { etag } : {}) } })
  const big = (seed: string) => JSON.stringify(Array.from({ length: 1000 }, (_, i) => `${seed} ${i}`))
  const counted = () => {
    const calls: string[] = []
    const encoder = (bytes: Uint8Array<ArrayBuffer>, coding: Coding) => {
      calls.push(coding)
      return encode(bytes, coding)
    }
    return { calls, encoder }
  }
  const body = async (r: Response) => new Uint8Array(await r.arrayBuffer())
  const plain = (text: string, coding: Coding) => encode(new TextEncoder().encode(text), coding)

  test('one (ETag, coding, answer) is encoded once; another ETag, coding or answer under the same ETag gets its own', async () => {
    const { calls, encoder } = counted()
    const compress = createCompressor(new RequestCache(1 << 20), () => 1, encoder)
    for (let i = 0; i < 3; i++) expect(await body(await compress(answer(big('a'), '"1"'), 'gzip'))).toEqual(plain(big('a'), 'gzip'))
    expect(calls).toEqual(['gzip'])
    expect(await body(await compress(answer(big('a'), '"1"'), 'br'))).toEqual(plain(big('a'), 'br'))
    expect(await body(await compress(answer(big('a'), '"2"'), 'gzip'))).toEqual(plain(big('a'), 'gzip'))
    // the same ETag over other bytes (another caller's ticket, another list prefix): never the first one's bytes
    expect(await body(await compress(answer(big('b'), '"1"'), 'gzip'))).toEqual(plain(big('b'), 'gzip'))
    expect(calls).toEqual(['gzip', 'br', 'gzip', 'gzip'])
  })

  test('answers without an ETag are encoded every time and not kept', async () => {
    const { calls, encoder } = counted()
    const cache = new RequestCache(1 << 20)
    const compress = createCompressor(cache, () => 1, encoder)
    for (let i = 0; i < 2; i++) expect(await body(await compress(answer(big('a')), 'gzip'))).toEqual(plain(big('a'), 'gzip'))
    expect(calls).toEqual(['gzip', 'gzip'])
    expect(cache.size().bytes).toBe(0)
  })

  test('a newer flags revision drops what was kept; the kept bytes stay within the budget', async () => {
    const { calls, encoder } = counted()
    const cache = new RequestCache(64 * 1024)
    let revision = 1
    const compress = createCompressor(cache, () => revision, encoder)
    await compress(answer(big('a'), '"a"'), 'gzip')
    revision = 2
    await compress(answer(big('a'), '"a"'), 'gzip')
    expect(calls.length).toBe(2)
    for (let i = 0; i < 50; i++) {
      const text = big(`answer ${i}`)
      expect(await body(await compress(answer(text, `"${i}"`), 'gzip'))).toEqual(plain(text, 'gzip'))
      expect(cache.size().bytes).toBeLessThanOrEqual(64 * 1024)
    }
    expect(cache.size().regions['compressed-answers']?.entries).toBeLessThan(50)
  })
})
