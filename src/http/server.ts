/**
 * createHttpApp(): the Elysia app with every route, the error handler and the headers every answer
 * carries (X-Request-Id, Cache-Control: no-store, X-Content-Type-Options: nosniff). `handle()` is
 * the entry for Bun.serve and for tests alike.
 */

import { Elysia } from 'elysia'
import type { Config } from '../config.ts'
import { AppError } from '../domain/errors.ts'
import type { ApiTokenService } from '../services/api-token-service.ts'
import type { AuditService } from '../services/audit-service.ts'
import type { AuthService } from '../services/auth-service.ts'
import type { EvaluationService } from '../services/evaluation-service.ts'
import type { FlagChangeFeed } from '../services/flag-change-feed.ts'
import type { FlagService } from '../services/flag-service.ts'
import type { HealthService } from '../services/health-service.ts'
import type { MigrationService } from '../services/migration-service.ts'
import type { SessionService } from '../services/session-service.ts'
import type { UserService } from '../services/user-service.ts'
import { createClientAddress } from './client-address.ts'
import { createCors } from './cors.ts'
import { errorResponse, problemMessage, thrownErrorResponse, validationProblem } from './error-handler.ts'
import type { StreamHub } from './event-stream.ts'
import { createFastLanes, type Lane, type Lanes } from './fast-lane.ts'
import { completeHeaders } from './json-response.ts'
import { attachMeta, metaOf, newRequestMeta, pathOf, requestIdFor } from './request-context.ts'
import { type RequestEvent, requestEvent } from './request-event.ts'
import { createRouteTable } from './route-table.ts'
import { auditRoutes } from './routes/audit-routes.ts'
import { authRoutes } from './routes/auth-routes.ts'
import { docsRoutes } from './routes/docs-routes.ts'
import { eventRoutes } from './routes/event-routes.ts'
import { flagRoutes } from './routes/flag-routes.ts'
import { healthRoutes } from './routes/health-routes.ts'
import { metricsRoutes } from './routes/metrics-routes.ts'
import { migrationRoutes } from './routes/migration-routes.ts'
import { ofrepRoutes } from './routes/ofrep-routes.ts'
import { sessionRoutes } from './routes/session-routes.ts'
import { tokenRoutes } from './routes/token-routes.ts'
import { uiRoutes } from './routes/ui-routes.ts'
import { userRoutes } from './routes/user-routes.ts'
import type { SessionTokenCodec } from './session-token-codec.ts'
import type { StreamCredentials } from './stream-credentials.ts'

/** Everything the HTTP layer needs. */
export interface HttpDeps {
  config: Config
  auth: AuthService
  users: UserService
  flags: FlagService
  migrations: MigrationService
  sessions: SessionService
  apiTokens: ApiTokenService
  evaluations: EvaluationService
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

/** The HTTP app and its request entry point. */
export interface HttpApp {
  app: Elysia
  /**
   * `peerAddress` may be a function: it is called only if the client address is needed (logins).
   * `keepOpen` lifts the connection's idle timeout, for event streams.
   */
  handle(request: Request, peerAddress?: string | (() => string), keepOpen?: () => void): Promise<Response>
  /** Closes every event stream and refuses new ones (first step of a graceful stop). */
  closeStreams(): void
  /** Bun `routes` for the hottest reads (see fast-lane.ts); `full` answers what they do not. */
  fastLanes(full: Lane): Lanes
}

/** Marker the global parser returns: routes read their body in their guard, after auth. */
const DEFERRED_BODY = Object.freeze({ deferred: true })

/** Builds the app (see module comment). */
export function createHttpApp(deps: HttpDeps): HttpApp {
  const bodyLimit = deps.config.limits.bodyBytes
  const clientAddress = createClientAddress(deps.config.trustProxy)
  const logError = deps.logError ?? ((id, err) => console.error(`request ${id} failed:`, err))
  const cors = createCors(deps.config.cors.origins)
  let allowed: (path: string) => string[] = () => []

  // Elysia by default finds the path at the first '/' after index 11, assuming a host of at least 4
  // characters: with `Host: x`, /zz/api/flags/... was routed as /api/flags/.... Routing must depend on
  // the path alone (contract §1), so it searches from just after 'http://' (Bun.serve here speaks http).
  const app = new Elysia({ normalize: false, handler: { standardHostname: false } })
    .onParse(() => DEFERRED_BODY)
    .onError(({ code, error, request }) => {
      if (error instanceof AppError) return errorResponse(error)
      if (code === 'NOT_FOUND') {
        const pathname = new URL(request.url).pathname
        const methods = allowed(pathname)
        if (methods.length > 0) {
          return errorResponse(
            new AppError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${pathname}; use ${methods.join(', ')}`),
            {
              allow: methods.join(', '),
            },
          )
        }
        return errorResponse(new AppError('NOT_FOUND', `no route ${request.method} ${pathname}`))
      }
      if (code === 'VALIDATION') {
        const v = error as unknown as { type: string; all: never[] }
        const problem = validationProblem(v.all ?? [], v.type)
        return errorResponse(new AppError('INVALID_REQUEST', problemMessage(problem), { ...problem }))
      }
      if (code === 'PARSE')
        return errorResponse(new AppError('INVALID_REQUEST', 'request body is not valid JSON', { field: 'body', reason: 'not valid JSON' }))
      return thrownErrorResponse(error, metaOf(request).id, logError)
    })
    .use(healthRoutes(deps.health))
    .use(authRoutes({ ...deps, bodyLimit }))
    .use(userRoutes({ ...deps, bodyLimit }))
    .use(flagRoutes({ ...deps, bodyLimit }))
    .use(sessionRoutes(deps))
    .use(tokenRoutes({ ...deps, bodyLimit }))
    .use(ofrepRoutes({ ...deps, bodyLimit }))
    .use(eventRoutes(deps))
    .use(auditRoutes({ ...deps, bodyLimit }))
    .use(uiRoutes())
    .use(metricsRoutes(deps.metrics))
    .use(migrationRoutes({ ...deps, bodyLimit, importLimit: deps.config.limits.importBytes, publicExport: deps.config.publicExport }))

  app.use(docsRoutes(app))
  const table = createRouteTable(app.routes)
  allowed = (path) => table.allowed(path)

  return {
    app: app as unknown as Elysia,
    closeStreams: () => deps.streams.closeAll(),
    fastLanes: (full) => createFastLanes({ ...deps, bodyLimit, cors, onRequest: deps.onRequest, logError }, full),
    async handle(request, peerAddress = '127.0.0.1', keepOpen) {
      const id = requestIdFor(request)
      const meta = newRequestMeta(id, performance.now(), () =>
        clientAddress(request, typeof peerAddress === 'function' ? peerAddress() : peerAddress),
      )
      if (keepOpen) meta.keepOpen = keepOpen
      attachMeta(request, meta)
      let response: Response | undefined = cors?.preflight(request)
      try {
        response ??= await app.handle(request)
      } catch (err) {
        response = thrownErrorResponse(err, id, logError)
      }
      completeHeaders(response, id)
      cors?.decorate(request, response)
      if (deps.onRequest) {
        const pathname = pathOf(request.url)
        deps.onRequest(
          requestEvent(
            request,
            pathname,
            table.template(request.method, pathname) ?? 'unmatched',
            response.status,
            meta.startedAt,
            id,
            meta.principal,
          ),
        )
      }
      return response
    },
  }
}
