/**
 * createHttpApp(): every route of the API in one table, each served through one pipeline and found
 * by one router (router.ts), whether the request came through the listener or through `handle()`,
 * which tests and tools call in-process. The 404 and 405 answers are generated routes too, with the
 * request id, CORS and an access line like any other.
 */

import type { Server } from 'bun'
import type { Config } from '../config.ts'
import type { Clock } from '../domain/clock.ts'
import { NotFoundError } from '../domain/errors.ts'
import type { RequestCache } from '../domain/request-cache.ts'
import type { ApiTokenService } from '../services/api-token-service.ts'
import type { AuditService } from '../services/audit-service.ts'
import type { AuthService } from '../services/auth-service.ts'
import type { ChangeRequestService } from '../services/change-request-service.ts'
import type { EnvironmentService } from '../services/environment-service.ts'
import type { EvaluationService } from '../services/evaluation-service.ts'
import type { FlagChangeFeed } from '../services/flag-change-feed.ts'
import type { FlagService } from '../services/flag-service.ts'
import type { GuardImpact } from '../services/guard-impact.ts'
import type { GuardMetrics } from '../services/guard-metrics.ts'
import type { GuardWatcher } from '../services/guard-watcher.ts'
import type { HealthService } from '../services/health-service.ts'
import type { InProcessUsage } from '../services/in-process-usage.ts'
import type { MigrationService } from '../services/migration-service.ts'
import type { OidcService } from '../services/oidc-service.ts'
import type { SegmentService } from '../services/segment-service.ts'
import type { SessionService } from '../services/session-service.ts'
import type { UsageService } from '../services/usage-service.ts'
import type { UserService } from '../services/user-service.ts'
import type { EvaluationRpc } from '../sync/evaluation-rpc.ts'
import { createClientAddress } from './client-address.ts'
import { createCors } from './cors.ts'
import { MethodNotAllowedError } from './error-handler.ts'
import type { StreamHub } from './event-stream.ts'
import { createPipeline, type RouteHandler } from './pipeline.ts'
import { LocalRequest, pathOf } from './request-context.ts'
import type { RequestEvent } from './request-event.ts'
import { type RouteSpec, route } from './route-spec.ts'
import { createRouter } from './router.ts'
import { auditRoutes } from './routes/audit-routes.ts'
import { authRoutes } from './routes/auth-routes.ts'
import { changeRequestRoutes } from './routes/change-request-routes.ts'
import { connectRoutes } from './routes/connect-routes.ts'
import { dependentsRoutes } from './routes/dependents-routes.ts'
import { docsRoutes } from './routes/docs-routes.ts'
import { environmentRoutes } from './routes/environment-routes.ts'
import { eventRoutes } from './routes/event-routes.ts'
import { flagArchiveRoutes } from './routes/flag-archive-routes.ts'
import { flagRoutes } from './routes/flag-routes.ts'
import { healthRoutes } from './routes/health-routes.ts'
import { impactRoutes } from './routes/impact-routes.ts'
import { metricsRoutes } from './routes/metrics-routes.ts'
import { migrationRoutes } from './routes/migration-routes.ts'
import { ofrepRoutes } from './routes/ofrep-routes.ts'
import { oidcRoutes } from './routes/oidc-routes.ts'
import { otlpRoutes } from './routes/otlp-routes.ts'
import { rolloutRoutes } from './routes/rollout-routes.ts'
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
  /** The process's clock (docs/development.md#time). */
  now: Clock
  /** What one request made for the next (known credentials here), under the daemon's one budget. */
  cache: RequestCache
  auth: AuthService
  users: UserService
  flags: FlagService
  segments: SegmentService
  environments: EnvironmentService
  changeRequests: ChangeRequestService
  inProcessUsage: InProcessUsage
  /** The application metrics guards read (docs/guarded-rollouts.md#the-applications-metrics). */
  guardMetrics: GuardMetrics
  /** `GET /api/flags/{name}/impact`. */
  impact: GuardImpact
  /** The watcher of guarded rollouts: checks after reports, and `GET /api/flags/{name}/rollout`. */
  guards: GuardWatcher
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
  /** Single sign-on, when `auth.oidc` is configured (docs/single-sign-on.md). */
  oidc?: OidcService
  /** Where a failed single sign-on's reason goes (a warning). */
  logOidc?: (reason: string) => void
  /** Where unexpected errors are reported (with the request id). */
  logError?: (requestId: string, err: unknown) => void
  /** Called once per answered request (logs and metrics). */
  onRequest?: (event: RequestEvent) => void
  /** flagd's evaluation service, when the evaluation port is on: its Connect routes (docs/openfeature.md#connect). */
  evaluationRpc?: EvaluationRpc
  /** Prometheus text for GET /metrics; no route when absent. */
  metrics?: { contentType: string; render(): Promise<string> }
}

/** The HTTP app. */
export interface HttpApp {
  /** Every route the API serves, documented or not (the OpenAPI document is built from it). */
  readonly routes: readonly RouteSpec[]
  /** Answers a request in-process, as if it came from `peerAddress` (tests, tools; a LocalRequest keeps its own peer). */
  handle(request: Request, peerAddress?: string): Promise<Response>
  /** Bun.serve's `fetch`: answers a request that came through the listener given to `attach`. */
  fetch(request: Request): Response | Promise<Response>
  /** Tells the app which server it runs in (client addresses, connection timeouts). */
  attach(server: Server<undefined>): void
  /** Closes every event stream and refuses new ones (first step of a graceful stop). */
  closeStreams(): void
}

/** Every route of the API, in registration order. */
function apiRoutes(deps: HttpDeps): RouteSpec[] {
  const bodyLimit = deps.config.limits.bodyBytes
  const routes: RouteSpec[] = [
    ...healthRoutes(deps.health, deps.oidc ? () => (deps.oidc as OidcService).status() : undefined),
    ...oidcRoutes({ oidc: deps.oidc, sessionTokens: deps.sessionTokens, bodyLimit, log: deps.logOidc ?? (() => {}) }),
    ...authRoutes({ ...deps, bodyLimit }),
    ...userRoutes({ users: deps.users, bodyLimit }),
    ...flagArchiveRoutes({ flags: deps.flags }),
    ...dependentsRoutes({ flags: deps.flags }),
    ...flagRoutes({ flags: deps.flags, evaluations: deps.evaluations, bodyLimit }),
    ...segmentRoutes({ segments: deps.segments, bodyLimit }),
    ...environmentRoutes({
      environments: deps.environments,
      bodyLimit,
      flagExists: (raw) => deps.flags.exists(raw),
    }),
    ...changeRequestRoutes({ changeRequests: deps.changeRequests, bodyLimit }),
    ...otlpRoutes({
      inProcessUsage: deps.inProcessUsage,
      guardMetrics: deps.guardMetrics,
      environment: deps.config.environment,
      guards: deps.guards,
    }),
    ...sessionRoutes(deps.sessions),
    ...tokenRoutes({ apiTokens: deps.apiTokens, bodyLimit }),
    ...ofrepRoutes({ ...deps, bodyLimit }),
    ...eventRoutes(deps),
    ...auditRoutes({ audit: deps.audit, flags: deps.flags, bodyLimit }),
    ...usageRoutes({ usage: deps.usage, flags: deps.flags }),
    ...impactRoutes({ impact: deps.impact, flags: deps.flags }),
    ...rolloutRoutes({ guards: deps.guards, flags: deps.flags }),
    ...uiRoutes(),
    ...metricsRoutes(deps.metrics),
    ...(deps.evaluationRpc ? connectRoutes({ rpc: deps.evaluationRpc, anonymous: deps.config.evaluation.anonymous }) : []),
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
  return (request, server, path = pathOf(request.url)) => {
    for (const [spec, handler] of specific) if ((spec.when as (path: string) => boolean)(path)) return handler(request, server, path)
    return rest(request, server, path)
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
    flagsRevision: () => deps.evaluations.revision(),
    cors: createCors(deps.config.cors.origins),
    clientAddress: createClientAddress(deps.config.trustProxy),
    onRequest: deps.onRequest,
    logError: deps.logError ?? ((id, err) => console.error(`request ${id} failed:`, err)),
  })
  const entries = [...Map.groupBy(routes, (spec) => `${spec.method} ${spec.path}`).values()].map((specs) => {
    const { method, path } = specs[0] as RouteSpec
    return { method, path, handler: sharedHandler(specs.map((spec) => [spec, pipeline.serve(spec)])) }
  })
  const router = createRouter(entries, {
    methodNotAllowed: (path, allow) => pipeline.serve(methodNotAllowed(path, allow)),
    notFound: pipeline.serve(notFound),
  })

  let server: Server<undefined> | null = null
  return {
    routes,
    handle: async (request, peerAddress = '127.0.0.1') =>
      router(request instanceof LocalRequest ? request : new LocalRequest(request, peerAddress), null),
    closeStreams: () => deps.streams.closeAll(),
    fetch: (request) => router(request, server),
    attach(listening) {
      server = listening
    },
  }
}
