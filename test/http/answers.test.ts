/**
 * The hot answers share prebuilt Headers and set only the request id per answer (answers.ts):
 * every answer must still carry its own id and ETag, and changing one answer's headers must not
 * reach another's.
 */

import { describe, expect, test } from 'bun:test'
import { customAnswer, jsonAnswer, notModifiedAnswer, taggedAnswer } from '../../src/http/answers.ts'
import { JSON_TYPE } from '../../src/http/error-handler.ts'

const CONTRACT = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' }

describe('answers built from shared headers', () => {
  test('each JSON answer keeps the request id it was made with', async () => {
    const first = jsonAnswer('req-1', '{"a":1}')
    const second = jsonAnswer('req-2', '{"b":2}', 503)
    expect(first.headers.get('x-request-id')).toBe('req-1')
    expect(second.headers.get('x-request-id')).toBe('req-2')
    expect(second.status).toBe(503)
    for (const r of [first, second]) {
      expect(r.headers.get('content-type')).toBe(JSON_TYPE)
      for (const [k, v] of Object.entries(CONTRACT)) expect(r.headers.get(k)).toBe(v)
    }
    expect(await first.json()).toEqual({ a: 1 })
  })

  test('a tagged answer and a 304 keep their own id and ETag, and carry nothing of the others', () => {
    const a = taggedAnswer('r-a', '{}', '"3"')
    const b = taggedAnswer('r-b', '{}', '"4"')
    const c = taggedAnswer('r-c', '{}', '"3"')
    const gone = notModifiedAnswer('r-d', '"3"')
    expect([a, b, c, gone].map((r) => [r.headers.get('x-request-id'), r.headers.get('etag')])).toEqual([
      ['r-a', '"3"'],
      ['r-b', '"4"'],
      ['r-c', '"3"'],
      ['r-d', '"3"'],
    ])
    expect(gone.status).toBe(304)
    expect(gone.headers.get('content-type')).toBeNull()
    for (const [k, v] of Object.entries(CONTRACT)) expect(gone.headers.get(k)).toBe(v)
  })

  test('headers added to one answer (CORS, by the pipeline) do not appear on the next', () => {
    const first = taggedAnswer('r-1', '{}', '"9"')
    first.headers.set('access-control-allow-origin', 'https://app.example')
    first.headers.set('x-request-id', 'changed')
    const next = taggedAnswer('r-2', '{}', '"9"')
    expect(next.headers.get('access-control-allow-origin')).toBeNull()
    expect(next.headers.get('x-request-id')).toBe('r-2')
    const plain = jsonAnswer('r-3', '{}')
    plain.headers.set('vary', 'Origin')
    expect(jsonAnswer('r-4', '{}').headers.get('vary')).toBeNull()
  })
})

describe('answers whose headers the route decides', () => {
  test('carry the request id and nosniff, and no-store unless the route says otherwise', () => {
    const page = customAnswer('r-5', '<p>', 200, { 'content-type': 'text/html; charset=utf-8' })
    expect(page.headers.get('x-request-id')).toBe('r-5')
    expect(page.headers.get('x-content-type-options')).toBe('nosniff')
    expect(page.headers.get('cache-control')).toBe('no-store')
    const asset = customAnswer('r-6', 'x', 200, { 'cache-control': 'public, max-age=31536000, immutable' })
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
  })
})
