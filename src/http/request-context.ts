/**
 * Per-request facts that Elysia's context does not carry across its hooks and the error handler:
 * the request id, the client address and the authenticated principal. Keyed by the Request object.
 */

import type { Caller, Principal } from '../domain/principal.ts'

/** What the HTTP layer knows about one request. */
export interface RequestMeta {
  id: string
  /** The client address (contract §2); worked out on first use, since only logins need it. */
  readonly address: string
  startedAt: number
  principal?: Principal
  /** Lifts the listener's idle timeout for this request's connection (long-lived event streams). */
  keepOpen?: () => void
}

/** A request's meta whose client address is resolved only when asked for. */
export function newRequestMeta(id: string, startedAt: number, resolveAddress: () => string): RequestMeta {
  let address: string | undefined
  return {
    id,
    startedAt,
    get address() {
      return (address ??= resolveAddress())
    },
  }
}

const metas = new WeakMap<Request, RequestMeta>()
const CLIENT_ID = /^[A-Za-z0-9._-]{1,128}$/
// Request ids made here: a random per-process prefix and a counter, unique without a UUID per request.
const ID_PREFIX = crypto.randomUUID().slice(0, 18)
let idCounter = 0

/** The client's `X-Request-Id` when it is well-formed, otherwise a new unique one (`headers`: the request's, when at hand). */
export function requestIdFor(request: Request, headers: Headers = request.headers): string {
  const given = headers.get('x-request-id')
  return given !== null && CLIENT_ID.test(given) ? given : `${ID_PREFIX}-${++idCounter}`
}

/** The path of an absolute request URL, without a second URL parse. */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start === -1) return '/'
  const end = url.indexOf('?', start)
  const hash = url.indexOf('#', start)
  const stop = end === -1 ? (hash === -1 ? url.length : hash) : end
  return url.slice(start, stop)
}

/** Records the meta of a request as it enters the app. */
export function attachMeta(request: Request, meta: RequestMeta): void {
  metas.set(request, meta)
}

/** The meta of a request (a fresh one if the request entered without `attachMeta`, as in tests). */
export function metaOf(request: Request): RequestMeta {
  let meta = metas.get(request)
  if (!meta) {
    meta = newRequestMeta(requestIdFor(request), performance.now(), () => 'unknown')
    metas.set(request, meta)
  }
  return meta
}

/** The authenticated principal of a request; only valid on routes behind the auth guard. */
export function principalOf(request: Request): Principal {
  const principal = metaOf(request).principal
  if (!principal) throw new Error('principalOf() called on a route without an auth guard')
  return principal
}

/** The caller of a request, as services take it: the principal and the request id. */
export function callerOf(request: Request): Caller {
  const meta = metaOf(request)
  if (!meta.principal) throw new Error('callerOf() called on a route without an auth guard')
  return { principal: meta.principal, requestId: meta.id }
}
