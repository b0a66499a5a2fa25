/**
 * JSON responses built with every header the contract puts on an answer (§1) already in their init:
 * content type, `Cache-Control: no-store`, `X-Content-Type-Options: nosniff` and the request id.
 * Setting headers on a finished Response costs a native call each; the benchmark's profile put the
 * wrapper's header writes at 15-20% of a read, so hot routes answer through here and the wrapper
 * leaves their responses alone.
 */

import { JSON_TYPE } from './error-handler.ts'
import { metaOf } from './request-context.ts'

const complete = new WeakSet<Response>()

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
  return new Response(body, { status: 200, headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'x-request-id': requestId, etag } })
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
  return new Response(null, { status: 304, headers: { etag, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'x-request-id': requestId } })
}

/**
 * A non-JSON answer whose headers the route decides (the web UI: HTML no-store, assets cacheable);
 * the request id and `nosniff` are added, and the wrapper leaves it alone.
 */
export function finalResponse(request: Request, body: string | null, status: number, headers: Record<string, string>): Response {
  const response = new Response(body, { status, headers: { ...headers, 'x-content-type-options': 'nosniff', 'x-request-id': metaOf(request).id } })
  complete.add(response)
  return response
}
