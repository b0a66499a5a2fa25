/**
 * CORS (docs/openfeature.md#ofrep), off unless `cors.origins` lists origins: a listed origin (or any, with `*`)
 * gets `Access-Control-Allow-Origin` on every answer and its preflight `OPTIONS` answered `204`; an
 * unlisted one gets no CORS headers at all, so the browser refuses the answer. Credentials travel in
 * headers (Authorization, X-API-Key), never cookies, so `Allow-Credentials` is never sent.
 */

/** What the pipeline asks of CORS. */
export interface Cors {
  /** The `204` answer to a preflight from an allowed origin, or `undefined` to route as usual. */
  preflight(request: Request, requestId: string): Response | undefined
  /** Adds the CORS headers an allowed origin gets to a finished answer. */
  decorate(request: Request, response: Response): void
}

/** What a protocol lets a page send and read: methods, request headers, response headers. */
export interface CorsVocabulary {
  methods: string
  allowHeaders: string
  exposeHeaders: string
}

/** The REST API's and OFREP's. */
const REST: CorsVocabulary = {
  methods: 'GET, POST, PUT, PATCH, DELETE',
  // the Connect protocol's too (the evaluation service's Connect routes, docs/openfeature.md#connect)
  allowHeaders:
    'Authorization, Content-Type, If-None-Match, If-Match, X-API-Key, X-Request-Id, Last-Event-ID, Connect-Protocol-Version, Connect-Timeout-Ms, Connect-Content-Encoding, Connect-Accept-Encoding, Content-Encoding, Accept-Encoding, X-User-Agent, Flagd-Selector',
  exposeHeaders: 'ETag, Location, X-Request-Id, Retry-After, Content-Encoding, Connect-Content-Encoding',
}
const MAX_AGE = '600'

/**
 * CORS for `origins`, or `undefined` when the list is empty (then nothing is added, not even `Vary`);
 * `vocabulary` is the protocol's (the evaluation port's Connect side has its own).
 */
export function createCors(origins: readonly string[], vocabulary: CorsVocabulary = REST): Cors | undefined {
  if (origins.length === 0) return undefined
  const any = origins.includes('*')
  const listed = new Set(origins)
  const allowed = (request: Request): string | undefined => {
    const origin = request.headers.get('origin')
    if (origin === null) return undefined
    return any ? '*' : listed.has(origin) ? origin : undefined
  }
  return {
    preflight(request, requestId) {
      if (request.method !== 'OPTIONS') return undefined
      const origin = allowed(request)
      if (origin === undefined) return undefined
      return new Response(null, {
        status: 204,
        headers: {
          'access-control-allow-origin': origin,
          'access-control-allow-methods': vocabulary.methods,
          'access-control-allow-headers': vocabulary.allowHeaders,
          'access-control-max-age': MAX_AGE,
          vary: 'Origin',
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
          'x-request-id': requestId,
        },
      })
    },
    decorate(request, response) {
      const origin = allowed(request)
      if (!any) varyOnOrigin(response.headers)
      if (origin === undefined) return
      response.headers.set('access-control-allow-origin', origin)
      if (request.method !== 'OPTIONS') response.headers.set('access-control-expose-headers', vocabulary.exposeHeaders)
    },
  }
}

/** Adds `Origin` to `Vary` once: a preflight already names it, and a cache must not mix origins' answers. */
function varyOnOrigin(headers: Headers): void {
  const vary = headers.get('vary')
  if (vary === null) headers.set('vary', 'Origin')
  else if (!/(^|,)\s*origin\s*(,|$)/i.test(vary)) headers.set('vary', `${vary}, Origin`)
}
