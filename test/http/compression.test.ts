/**
 * Compressed answers (docs/operations.md#compression): large answers of the routes that declare it
 * are sent with Brotli or gzip to clients that accept them, with `Vary: Accept-Encoding`; small answers, clients
 * that refuse gzip and other routes are sent as they are. Through the router production serves.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { type ServedApp, serveApp } from '../helpers/served-app.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
let served: ServedApp
beforeAll(async () => {
  t = await createTestApp()
  served = serveApp(t)
  const flags = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`zip/f${i}`, { type: 'STRING', value: `value number ${i}` }]))
  const doc = { environment: 'dev', version: '1.0.0', createdAt: '2026-11-27T00:00:00.000Z', flags }
  expect((await t.req('PUT', '/api/migrations', { token: t.adminToken, body: doc })).status).toBe(200)
})
afterAll(async () => {
  await served?.stop()
  await t?.close()
})

/** A request over real HTTP, the body as sent (no decompression by the client). */
async function raw(method: string, path: string, acceptEncoding: string | undefined, body?: unknown) {
  const res = await fetch(served.base + path, {
    method,
    headers: {
      authorization: `Bearer ${t.adminToken}`,
      'content-type': 'application/json',
      ...(acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    decompress: false,
  })
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) }
}
const text = (r: { headers: Headers; bytes: Uint8Array }) => {
  const coding = r.headers.get('content-encoding')
  return new TextDecoder().decode(coding === 'gzip' ? gunzipSync(r.bytes) : coding === 'br' ? brotliDecompressSync(r.bytes) : r.bytes)
}

test.each([
  ['POST', '/ofrep/v1/evaluate/flags', { context: { targetingKey: 'u' } }],
  ['GET', '/api/flags', undefined],
  ['GET', '/api/migrations/export', undefined],
  ['GET', '/api/migrations/export?format=flagd', undefined],
  ['GET', '/api/openapi.json', undefined],
])('%s %s: Brotli or gzip for a client that accepts it, the same JSON, much smaller', async (method, path, body) => {
  const plain = await raw(method, path, 'identity', body)
  const zipped = await raw(method, path, 'gzip, deflate', body)
  const brotli = await raw(method, path, 'gzip, deflate, br', body)
  expect([plain.status, zipped.status, brotli.status]).toEqual([200, 200, 200])
  expect(plain.headers.get('content-encoding')).toBeNull()
  expect(zipped.headers.get('content-encoding')).toBe('gzip')
  expect(brotli.headers.get('content-encoding')).toBe('br')
  expect(JSON.parse(text(brotli)).flags).toEqual(JSON.parse(text(zipped)).flags)
  expect(zipped.headers.get('vary')).toContain('Accept-Encoding')
  expect(zipped.headers.get('x-request-id')).toBeString()
  expect(zipped.headers.get('content-type')).toBe(plain.headers.get('content-type'))
  expect(zipped.headers.get('etag')).toBe(plain.headers.get('etag')) // the same representation's validator
  if (path.startsWith('/api/migrations')) expect(JSON.parse(text(zipped)).flags).toEqual(JSON.parse(text(plain)).flags)
  else expect(JSON.parse(text(zipped))).toEqual(JSON.parse(text(plain)))
  expect(zipped.bytes.length).toBeLessThan(plain.bytes.length / 3)
})

test('small answers, q=0, and routes that do not declare it are sent as they are', async () => {
  const small = await raw('GET', '/api/segments', 'gzip', undefined)
  expect([small.status, small.headers.get('content-encoding'), small.headers.get('vary')]).toEqual([200, null, 'Accept-Encoding'])
  const refused = await raw('GET', '/api/flags', 'gzip;q=0, br;q=0, identity', undefined)
  expect(refused.headers.get('content-encoding')).toBeNull()
  const preferred = await raw('GET', '/api/flags', 'br;q=0.5, gzip', undefined)
  expect(preferred.headers.get('content-encoding')).toBe('gzip')
  const single = await raw('POST', '/ofrep/v1/evaluate/flags/zip/f1', 'gzip', { context: {} })
  expect([single.headers.get('content-encoding'), single.headers.get('vary')]).toEqual([null, null])
  // a 304 stays a 304
  const first = await raw('POST', '/ofrep/v1/evaluate/flags', 'gzip', { context: { targetingKey: 'u' } })
  const again = await fetch(`${served.base}/ofrep/v1/evaluate/flags`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${t.adminToken}`,
      'content-type': 'application/json',
      'accept-encoding': 'gzip',
      'if-none-match': first.headers.get('etag') ?? '',
    },
    body: JSON.stringify({ context: { targetingKey: 'u' } }),
  })
  expect(again.status).toBe(304)
})
