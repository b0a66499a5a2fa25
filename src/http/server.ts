/**
 * createHttpApp(): every route of the API in one table, served through one pipeline. Each route's
 * pipeline handler is registered with Elysia and given to Bun's router: the listener's Bun router
 * calls it for the route's own path and methods, and whatever Bun's router does not match (another
 * method, a trailing slash, an unknown path) goes to Elysia's router (`app.fetch`), as does
 * `handle()`, which tests and tools call in-process. Either way a request is answered by the same
 * steps. The 404 and 405 answers are generated routes too, with the request id, CORS and an access
 * line like any other.
 *
 * Why this shape (measured with bench/contest.ts, one core shared; docs/performance.md): Elysia's own lifecycle
 * hooks for the per-request work answered `/health` at about 0.75 × the contract's floor; the
 * pipeline inside Elysia's compiled route handler (its Bun adapter's `createBunRouteHandler`) cost
 * 7% on an API-token read against the fast lanes it replaces; Bun's router calling the pipeline
 * handler directly answers reads, `/health` and OFREP at 0.98–1.01 × those lanes.
 */

import type { Server } from 'bun'
import { Elysia } from 'elysia'
import type { Config } from '../config.ts'
import { NotFoundError } from '../domain/errors.ts'
import type { ApiTokenService } from '../services/api-token-service.ts'
import type { AuditService } from '../services/audit-service.ts'
import type { AuthService } from '../services/auth-service.ts'
import type { EvaluationService } from '../services/evaluation-service.ts'
import type { FlagChangeFeed } from '../services/flag-change-feed.ts'
import type { FlagService } from '../services/flag-service.ts'
import type { HealthService } from '../services/health-service.ts'
import type { MigrationService } from '../services/migration-service.ts'
import type { SegmentService } from '../services/segment-service.ts'
import type { SessionService } from '../services/session-service.ts'
import type { UsageService } from '../services/usage-service.ts'
import type { UserService } from '../services/user-service.ts'
import { createClientAddress } from './client-address.ts'
import { createCors } from './cors.ts'
import { MethodNotAllowedError } from './error-handler.ts'
import type { StreamHub } from './event-stream.ts'
import { createPipeline, type RouteHandler } from './pipeline.ts'
import { LocalRequest } from './request-context.ts'
import type { RequestEvent } from './request-event.ts'
import { type RouteSpec, route } from './route-spec.ts'
import { auditRoutes } from './routes/audit-routes.ts'
import { authRoutes } from './routes/auth-routes.ts'
import { docsRoutes } from './routes/docs-routes.ts'
import { eventRoutes } from './routes/event-routes.ts'
import { flagRoutes } from './routes/flag-routes.ts'
import { healthRoutes } from './routes/health-routes.ts'
import { metricsRoutes } from './routes/metrics-routes.ts'
import { migrationRoutes } from './routes/migration-routes.ts'
import { ofrepRoutes } from './routes/ofrep-routes.ts'
import { segmentRoutes } from './routes/segment-routes.ts'
import { sessionRoutes } from './routes/session-routes.ts'
import { tokenRoutes } from './routes/token-routes.ts'
import { uiRoutes } from './routes/ui-routes.ts'
import { usageRoutes } from './routes/usage-routes.ts'
import { userRoutes } from './routes/user-routes.ts'
import type { SessionTokenCodec } from './session-token-codec.ts'
import type { StreamCredentials } from './stream-credentials.ts'

/** Everything the HTTP layer needs. */
export interface HttpDeps {
  config: Config
  auth: AuthService
  users: UserService
  flags: FlagService
  segments: SegmentService
  migrations: MigrationService
  sessions: SessionService
  apiTokens: ApiTokenService
  evaluations: EvaluationService
  usage: UsageService
  audit: AuditService
  changeFeed: FlagChangeFeed
  streams: StreamHub
  streamCredentials: StreamCredentials
  health: HealthService
  sessionTokens: SessionTokenCodec
  /** Where unexpected errors are reported (with the request id). */
  logError?: (requestId: string, err: unknown) => void
  /** Called once per answered request (logs and metrics). */
  onRequest?: (event: RequestEvent) => void
  /** Prometheus text for GET /metrics; no route when absent. */
  metrics?: { contentType: string; render(): Promise<string> }
}

/** Bun's `routes`: handlers by path and method. */
export type BunRoutes = Record<string, Partial<Record<string, RouteHandler>>>

/** The HTTP app. */
export interface HttpApp {
  /** Every route the API serves, documented or not (the OpenAPI document is built from it). */
  readonly routes: readonly RouteSpec[]
  /** Answers a request in-process, as if it came from `peerAddress` (tests, tools). */
  handle(request: Request, peerAddress?: string): Promise<Response>
  /** Bun.serve's `routes` and `fetch` for a listener; `attach` tells the app which server it runs in. */
  serving(): { routes: BunRoutes; fetch: (request: Request) => Response | Promise<Response>; attach(server: Server<undefined>): void }
  /** Closes every event stream and refuses new ones (first step of a graceful stop). */
  closeStreams(): void
}

/** Every route of the API, in registration order. */
function apiRoutes(deps: HttpDeps): RouteSpec[] {
  const bodyLimit = deps.config.limits.bodyBytes
  const routes: RouteSpec[] = [
    ...healthRoutes(deps.health),
    ...authRoutes({ ...deps, bodyLimit }),
    ...userRoutes({ users: deps.users, bodyLimit }),
    ...flagRoutes({ flags: deps.flags, evaluations: deps.evaluations, bodyLimit }),
    ...segmentRoutes({ segments: deps.segments, bodyLimit }),
    ...sessionRoutes(deps.sessions),
    ...tokenRoutes({ apiTokens: deps.apiTokens, bodyLimit }),
    ...ofrepRoutes({ ...deps, bodyLimit }),
    ...eventRoutes(deps),
    ...auditRoutes({ audit: deps.audit, flags: deps.flags, bodyLimit }),
    ...usageRoutes({ usage: deps.usage, flags: deps.flags }),
    ...uiRoutes(),
    ...metricsRoutes(deps.metrics),
    ...migrationRoutes({
      migrations: deps.migrations,
      bodyLimit,
      importLimit: deps.config.limits.importBytes,
      publicExport: deps.config.publicExport,
    }),
  ]
  return [...routes, ...docsRoutes(() => routes)]
}

/** One handler for the routes of one method and path: the first whose `when` holds, else the one without. */
function sharedHandler(pairs: [RouteSpec, RouteHandler][]): RouteHandler {
  if (pairs.length === 1) return (pairs[0] as [RouteSpec, RouteHandler])[1]
  const specific = pairs.filter(([spec]) => spec.when !== undefined)
  const rest = pairs.find(([spec]) => spec.when === undefined)?.[1]
  if (rest === undefined || specific.length + 1 !== pairs.length) throw new Error('routes sharing a path need one without `when`')
  return (request, server) => {
    for (const [spec, handler] of specific) if ((spec.when as (url: string) => boolean)(request.url)) return handler(request, server)
    return rest(request, server)
  }
}

/** The 405 answer of a path, for the methods it does not take (its `Allow` lists those it does). */
function methodNotAllowed(path: string, allow: string[]): RouteSpec {
  return route({
    method: 'GET',
    path,
    authenticate: false,
    label: 'unmatched',
    handle: (c) => {
      throw new MethodNotAllowedError(c.request.method, c.path, allow)
    },
  })
}

const notFound = route({
  method: 'GET',
  path: '/*',
  authenticate: false,
  label: 'unmatched',
  handle: (c) => {
    throw new NotFoundError(`no route ${c.request.method} ${c.path}`)
  },
})

/** Builds the app (see module comment). */
export function createHttpApp(deps: HttpDeps): HttpApp {
  const routes = apiRoutes(deps)
  const pipeline = createPipeline({
    ...deps,
    cors: createCors(deps.config.cors.origins),
    clientAddress: createClientAddress(deps.config.trustProxy),
    onRequest: deps.onRequest,
    logError: deps.logError ?? ((id, err) => console.error(`request ${id} failed:`, err)),
  })

  // Elysia by default finds the path at the first '/' after index 11, assuming a host of at least 4
  // characters: with `Host: x`, /zz/api/flags/... was routed as /api/flags/.... Routing must depend on
  // the path alone (docs/api.md#conventions), so it searches from just after 'http://' (standardHostname: false).
  const app = new Elysia({ normalize: false, handler: { standardHostname: false } })
  let server: Server<undefined> | null = null
  const register = (method: string, path: string, handler: RouteHandler) =>
    app.route(method, path, (ctx: { request: Request }) => handler(ctx.request, ctx.request instanceof LocalRequest ? null : server))

  // the same handlers, by path and method, for Bun's router
  const served: { method: string; path: string; handler: RouteHandler }[] = []
  const methodsByPath = new Map<string, string[]>()
  for (const [key, specs] of Map.groupBy(routes, (spec) => `${spec.method} ${spec.path}`)) {
    const [method, path] = key.split(' ') as [string, string]
    const handler = sharedHandler(specs.map((spec) => [spec, pipeline.serve(spec)]))
    register(method, path, handler)
    served.push({ method, path, handler })
    methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), method])
  }
  for (const [path, methods] of methodsByPath) register('ALL', path, pipeline.serve(methodNotAllowed(path, methods.sort())))
  register('ALL', notFound.path, pipeline.serve(notFound))

  return {
    routes,
    handle: (request, peerAddress = '127.0.0.1') => app.handle(new LocalRequest(request, peerAddress)),
    closeStreams: () => deps.streams.closeAll(),
    serving() {
      // Bun's router gets each route's own methods (and HEAD beside GET) and calls the route's
      // pipeline handler itself; anything else (another method, a trailing slash, an unknown path)
      // goes to Elysia's router, whose 405 and 404 routes answer it. Listing every method of every
      // path in Bun's table cost 1.8 MB of idle memory.
      const bunRoutes: BunRoutes = {}
      const wildcards = new Set(served.filter((r) => r.path.endsWith('/*')).map((r) => r.path.slice(0, -2)))
      // Bun calls a route's handler with the request and the server, which is what a pipeline handler takes
      for (const { method, path, handler } of served) {
        // `/api/flags/` is the list, as in Elysia's router, not the read of a flag named ""
        for (const p of wildcards.has(path) ? [path, `${path}/`] : [path]) {
          const methods = (bunRoutes[p] ??= {})
          methods[method] = handler
          if (method === 'GET') methods.HEAD = handler
        }
      }
      return {
        routes: bunRoutes,
        fetch: (request) => app.fetch(request),
        attach(listening) {
          server = listening
        },
      }
    },
  }
}
