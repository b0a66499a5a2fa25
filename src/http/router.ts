/**
 * The one router: it finds the pipeline handler of a request's method and path, for the listener
 * (Bun.serve's `fetch`) and for `handle()` (tests and tools) alike, so what the tests call is what
 * production answers.
 *
 * Paths are the route table's: static (`/health`), or a static prefix ending in one parameter
 * segment (`/api/users/:userId`, never empty) or a wildcard rest (`/api/flags/*`, which also takes
 * an empty rest). The most specific pattern wins: static, then the longest prefix, a parameter
 * before a wildcard. A trailing slash is insignificant (`/health/` is
 * `/health`, `/api/users/1/` is `/api/users/1`) unless a wildcard takes it. A path that a pattern takes with other methods
 * is that pattern's 405 (its `Allow` lists them), HEAD is answered by GET, and nothing else is a
 * 404. Matching is on the path as sent: no case folding, no trailing-slash rewriting, no decoding
 * (a route decodes its own parameters), and the Host header plays no part.
 *
 * Why our own: docs/decisions/0001-own-router.md (the measurement is there). A static lookup is one
 * Map get; the rest compares prefixes, allocating nothing.
 */

import type { RouteHandler } from './pipeline.ts'
import { pathOf } from './request-context.ts'

/** A route of the table: where it is and the handler that answers it. */
export interface RouterEntry {
  method: string
  path: string
  handler: RouteHandler
}

/** The fallbacks: the 405 answer of a pattern (given its methods) and the 404. */
export interface RouterFallbacks {
  methodNotAllowed(path: string, allow: string[]): RouteHandler
  notFound: RouteHandler
}

/** The handlers of one pattern by method, and its 405. */
interface Methods {
  byMethod: Map<string, RouteHandler>
  refuse: RouteHandler
}

/** A pattern ending in a parameter or a wildcard: the static prefix before it, and what follows. */
interface Dynamic {
  prefix: string
  wildcard: boolean
  methods: Methods
}

/** True when `path`, past `from`, is one non-empty segment (a trailing slash allowed). */
function oneSegment(path: string, from: number): boolean {
  const slash = path.indexOf('/', from)
  return slash === -1 ? path.length > from : slash === path.length - 1 && slash > from
}

/** Builds the router of a route table (see module comment). */
export function createRouter(entries: readonly RouterEntry[], fallbacks: RouterFallbacks): RouteHandler {
  const patterns = new Map<string, Map<string, RouteHandler>>()
  for (const { method, path, handler } of entries) {
    const methods = patterns.get(path) ?? new Map<string, RouteHandler>()
    if (methods.has(method)) throw new Error(`two handlers for ${method} ${path}`)
    methods.set(method, handler)
    patterns.set(path, methods)
  }

  const statics = new Map<string, Methods>()
  const dynamics: Dynamic[] = []
  for (const [path, byMethod] of patterns) {
    const allow = [...byMethod.keys()].sort()
    const get = byMethod.get('GET')
    if (get !== undefined && !byMethod.has('HEAD')) byMethod.set('HEAD', get)
    const methods: Methods = { byMethod, refuse: fallbacks.methodNotAllowed(path, allow) }
    const last = path.lastIndexOf('/') + 1
    const head = path.slice(0, last)
    if (head.includes(':') || head.includes('*')) throw new Error(`only the last segment may be a parameter or a wildcard: ${path}`)
    const tail = path.slice(last)
    if (tail === '*' || tail.startsWith(':')) dynamics.push({ prefix: head, wildcard: tail === '*', methods })
    else statics.set(path, methods)
  }
  // a trailing slash is insignificant: `/health/` is /health, `/ui` is /ui/ (docs/api.md#conventions)
  for (const [path, methods] of [...statics]) {
    const other = path.endsWith('/') ? path.slice(0, -1) : `${path}/`
    if (other !== '' && !statics.has(other)) statics.set(other, methods)
  }
  // the longest prefix is the most specific; for one prefix, a parameter before the wildcard
  dynamics.sort((a, b) => b.prefix.length - a.prefix.length || Number(a.wildcard) - Number(b.wildcard))

  // static paths by length, compared whole: cheaper than hashing a path made for each request
  // (the profile of /health put a Map lookup at 5% of the request)
  const byLength: [string, Methods][][] = []
  for (const [path, methods] of statics) (byLength[path.length] ??= []).push([path, methods])

  const find = (path: string): Methods | undefined => {
    const same = byLength[path.length]
    if (same !== undefined) for (const [p, methods] of same) if (p === path) return methods
    for (const d of dynamics) {
      if (path.startsWith(d.prefix) && (d.wildcard || oneSegment(path, d.prefix.length))) return d.methods
    }
    return undefined
  }

  return (request, server) => {
    const path = pathOf(request.url)
    const methods = find(path)
    if (methods === undefined) return fallbacks.notFound(request, server, path)
    return (methods.byMethod.get(request.method) ?? methods.refuse)(request, server, path)
  }
}
