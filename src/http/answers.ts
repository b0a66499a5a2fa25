/**
 * Every response flagd sends is built here, with the headers docs/api.md#conventions puts on every answer
 * at construction: the request id, `X-Content-Type-Options: nosniff`, and for JSON the content type
 * and `Cache-Control: no-store`. One rule follows for routes: return data (answered as JSON `200`) or
 * a Response made here, never `new Response`, so nothing has to patch headers afterwards (setting a
 * header on a finished Response costs a native call each; the bench's profile once put such writes at
 * 15–20% of a read).
 */

import { BoundedMap } from '../domain/bounded-map.ts'
import { JSON_TYPE } from './error-handler.ts'

// The hot answers' headers are built once and only their request id is set per answer: a Response
// copies the Headers it is given (Fetch standard), so an answer made earlier keeps its own id, and
// copying a built Headers is far cheaper than parsing a header object (contest: reads and /health
// ×1.07–1.10). One set for any JSON answer, one per ETag for 200s with a tag, one per ETag for 304s.
const PLAIN = new Headers({
  'content-type': JSON_TYPE,
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-request-id': '',
})
const tagged = new BoundedMap<string, Headers>(1000)
const unchanged = new BoundedMap<string, Headers>(1000)

const taggedFields = (etag: string) => ({
  'content-type': JSON_TYPE,
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  etag,
})
const unchangedFields = (etag: string) => ({ etag, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' })

/** The headers `table` keeps for `etag` (built by `fields` the first time), set to `requestId`. */
function prebuilt(
  table: BoundedMap<string, Headers>,
  etag: string,
  requestId: string,
  fields: (etag: string) => Record<string, string>,
): Headers {
  let headers = table.get(etag)
  if (headers === undefined) table.set(etag, (headers = new Headers(fields(etag))))
  headers.set('x-request-id', requestId)
  return headers
}

// The text of each large answer with an ETag, by its Response: the compressor finds what it kept for
// that text without reading the body back (reading back a 200 KB export cost the daemon twice what
// sending it did: docs/performance.md#compressed-answers). Small answers (the hot reads) are not noted.
const texts = new WeakMap<Response, string>()
const NOTED_FROM = 4096

/** `response`, its `text` noted when it is large and tagged. */
function noted(response: Response, text: unknown, etag: string | undefined): Response {
  if (etag !== undefined && typeof text === 'string' && text.length >= NOTED_FROM) texts.set(response, text)
  return response
}

/** The text a large answer with an ETag was made from, when it was made here (the compressor's key). */
export const taggedText = (response: Response): string | undefined => texts.get(response)

/** A JSON answer with text already serialized; `extra` adds headers (Location, ETag, Link). */
export function jsonAnswer(requestId: string, body: string, status = 200, extra?: Record<string, string>): Response {
  if (extra === undefined) {
    PLAIN.set('x-request-id', requestId)
    return new Response(body, { status, headers: PLAIN })
  }
  const headers: Record<string, string> = {
    'content-type': JSON_TYPE,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-request-id': requestId,
  }
  Object.assign(headers, extra)
  return noted(new Response(body, { status, headers }), body, extra.etag)
}

/** A `200` JSON answer with an `ETag` (flag reads, the OFREP bulk evaluation). */
export function taggedAnswer(requestId: string, body: string, etag: string): Response {
  return noted(new Response(body, { status: 200, headers: prebuilt(tagged, etag, requestId, taggedFields) }), body, etag)
}

/** `304 Not Modified` for a conditional read: no body, the ETag and the headers of every answer. */
export function notModifiedAnswer(requestId: string, etag: string): Response {
  return new Response(null, { status: 304, headers: prebuilt(unchanged, etag, requestId, unchangedFields) })
}

/**
 * An answer whose other headers the route decides (the web UI, the API explorer, metrics, the export
 * download, event streams); the request id and `nosniff` are added, and `Cache-Control: no-store`
 * unless the route says otherwise (the UI's hashed assets are cacheable).
 */
export function customAnswer(
  requestId: string,
  body: ConstructorParameters<typeof Response>[0],
  status: number,
  headers: Record<string, string>,
): Response {
  const response = new Response(body, {
    status,
    headers: { 'cache-control': 'no-store', ...headers, 'x-content-type-options': 'nosniff', 'x-request-id': requestId },
  })
  return noted(response, body, headers.etag)
}
