/**
 * JSON responses built with every header the contract puts on an answer (§1) at construction:
 * content type, `Cache-Control: no-store`, `X-Content-Type-Options: nosniff` and the request id.
 * Setting headers on a finished Response costs a native call each; the benchmark's profile put the
 * wrapper's header writes at 15-20% of a read, so hot routes answer through here and the wrapper
 * leaves their responses alone.
 */

import { BoundedMap } from '../domain/bounded-map.ts'
import { JSON_TYPE } from './error-handler.ts'
import { metaOf } from './request-context.ts'

const complete = new WeakSet<Response>()

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

/** A JSON answer to `request` whose headers are complete. */
export function jsonResponse(request: Request, body: string, status = 200, extra?: Record<string, string>): Response {
  const response = jsonAnswer(metaOf(request).id, body, status, extra)
  complete.add(response)
  return response
}

/** Marks an answer built with `jsonAnswer`/`notModifiedAnswer` as complete, so the wrapper leaves it alone. */
export function asComplete(response: Response): Response {
  complete.add(response)
  return response
}

/** The same answer for the request with id `requestId`, for the fast lane (which has no meta). */
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
  if (extra) Object.assign(headers, extra)
  return new Response(body, { status, headers })
}

/**
 * A `200` JSON answer with an `ETag`, its headers written in one literal: flag reads and the OFREP
 * bulk evaluation answer through here (adding the tag to a built header object changed its shape on
 * every request).
 */
export function taggedJsonAnswer(requestId: string, body: string, etag: string): Response {
  const headers = prebuilt(tagged, etag, requestId, taggedFields)
  return new Response(body, { status: 200, headers })
}

/**
 * Gives any other response the same headers (an Elysia-built answer, an error): set one by one on
 * the finished Response, and the JSON content type made `application/json; charset=utf-8`.
 */
export function completeHeaders(response: Response, requestId: string): void {
  if (complete.has(response)) return
  const headers = response.headers
  headers.set('x-request-id', requestId)
  headers.set('cache-control', 'no-store')
  headers.set('x-content-type-options', 'nosniff')
  const type = headers.get('content-type')
  if (type !== null && type !== JSON_TYPE && type.startsWith('application/json')) headers.set('content-type', JSON_TYPE)
}

/** `304 Not Modified` for a conditional read: no body, the ETag and the contract's headers. */
export function notModified(request: Request, etag: string): Response {
  const response = notModifiedAnswer(metaOf(request).id, etag)
  complete.add(response)
  return response
}

/** The same `304` for the request with id `requestId` (the fast lane). */
export function notModifiedAnswer(requestId: string, etag: string): Response {
  const headers = prebuilt(unchanged, etag, requestId, unchangedFields)
  return new Response(null, { status: 304, headers })
}

/**
 * A non-JSON answer whose headers the route decides (the web UI: HTML no-store, assets cacheable);
 * the request id and `nosniff` are added, and the wrapper leaves it alone.
 */
export function finalResponse(request: Request, body: string | null, status: number, headers: Record<string, string>): Response {
  const response = new Response(body, {
    status,
    headers: { ...headers, 'x-content-type-options': 'nosniff', 'x-request-id': metaOf(request).id },
  })
  complete.add(response)
  return response
}
