/**
 * What a route's handler is given: one object per request, made by the pipeline and filled as it
 * goes (request id, path parameters, query, caller, body). Handlers read it instead of looking
 * anything up by the Request, so per-request state has one home and no side table.
 */

import type { Server } from 'bun'
import type { Caller, Principal } from '../domain/principal.ts'

/** The listener a request came through: its socket peer and its connection's idle timeout. */
export type Listening = Pick<Server<undefined>, 'requestIP' | 'timeout'>

/** A request whose peer is given rather than read from a socket: `http.handle()` in tests and tools. */
export class LocalRequest extends Request {
  constructor(
    request: Request,
    readonly peerAddress: string,
  ) {
    super(request)
  }
}

/**
 * A request that came through the evaluation port's HTTP/1.1 side (docs/openfeature.md#connect): its
 * peer, and whether that listener takes calls without a credential (`evaluation.anonymous`, or the
 * unix socket).
 */
export class RpcPortRequest extends LocalRequest {
  constructor(
    request: Request,
    peerAddress: string,
    readonly anonymousAllowed: boolean,
  ) {
    super(request, peerAddress)
  }
}

const CLIENT_ID = /^[A-Za-z0-9._-]{1,128}$/
// Request ids made here: a random per-process prefix and a counter, unique without a UUID per request.
const ID_PREFIX = crypto.randomUUID().slice(0, 18)
let idCounter = 0

/** The header the web UI sends with every request (`ui`), so its changes are audited as made in the UI. */
export const CLIENT_HEADER = 'x-flagd-client'

/** The client's `X-Request-Id` when it is well-formed, otherwise a new unique one. */
export function requestIdFor(headers: Headers): string {
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

/** One request as the pipeline and the handler see it; `Query` is the route's query type (route-spec.ts). */
export class RequestContext<Query = Record<string, string>> {
  /** The request path (no query), as sent. */
  readonly path: string
  /** Path parameters: `*` for a wildcard route's rest, `userId` for `/api/users/:userId`. */
  params: Record<string, string> = {}
  /** The query, checked against the route's schema (the pipeline sets it before the handler runs). */
  query: Query = {} as Query
  /** The JSON body, read and checked after authentication (routes that take one). */
  body: unknown = undefined
  /** The authenticated caller (routes behind authentication). */
  principal: Principal | undefined = undefined
  private resolvedAddress: string | undefined

  constructor(
    readonly request: Request,
    readonly id: string,
    /** The listener it came through; none in-process (`LocalRequest` carries its peer). */
    private readonly server: Listening | null,
    private readonly addressOf: (request: Request, peer: string) => string,
    path?: string,
  ) {
    this.path = path ?? pathOf(request.url)
  }

  /** The client address (docs/api.md#authentication), worked out on first use. */
  get address(): string {
    if (this.resolvedAddress !== undefined) return this.resolvedAddress
    const r = this.request
    const peer = r instanceof LocalRequest ? r.peerAddress : (this.server?.requestIP(r)?.address ?? 'unknown')
    this.resolvedAddress = this.addressOf(r, peer)
    return this.resolvedAddress
  }

  /** The principal of a route behind authentication (the pipeline guarantees one there). */
  get auth(): Principal {
    if (this.principal === undefined) throw new Error(`no authenticated caller on ${this.path}: the route is public`)
    return this.principal
  }

  /** The caller as services take it: the principal and the request id. */
  get caller(): Caller {
    // the web UI says so in a header of its own; it only labels the audit entry, so trusting it is safe
    return this.request.headers.get(CLIENT_HEADER) === 'ui'
      ? { principal: this.auth, requestId: this.id, via: 'ui' }
      : { principal: this.auth, requestId: this.id }
  }

  /** Keeps this request's connection open past the idle timeout (event streams). */
  keepOpen(): void {
    this.server?.timeout(this.request, 0)
  }
}
