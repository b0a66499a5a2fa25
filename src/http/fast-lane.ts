/**
 * The fast lanes (issue 11): Bun's own router hands the hottest routes, `GET /api/flags/{name}`,
 * `GET /health` and both OFREP evaluations, straight to small handlers instead of through the
 * wrapper and Elysia's generic request handler. Measured with the servers sharing one core
 * (bench/contest.ts; README "Performance"), that path cost a read about a third of its time: the
 * route lookup, Elysia's context and hooks, an awaited guard, the request's meta.
 *
 * A lane answers only the common case, and only with the functions the routes themselves answer
 * with (`readFlagAnswer`, `healthAnswer`, `evaluateOneAnswer`, `evaluateAllAnswer`; the credential
 * through `knownCredential`, remembered by the credential cache): a credential this process already
 * knows, the permission held, no query string on the REST reads. Everything else (HEAD, a query
 * string, no or a first-seen or a bad credential, a missing flag, a refusal) goes to the full
 * pipeline before anything is read, so that stays the one reference for every answer; a
 * differential test holds both to the same status, headers and body. Once an OFREP lane has read
 * the body it answers to the end, failures too, as the routes' handlers do. Every answer still gets
 * its request id, CORS headers, metrics and access line.
 */

import type { Server } from 'bun'
import { can } from '../domain/access-policy.ts'
import type { Principal } from '../domain/principal.ts'
import type { EvaluationService } from '../services/evaluation-service.ts'
import type { FlagService } from '../services/flag-service.ts'
import type { HealthService } from '../services/health-service.ts'
import type { GuardDeps } from './auth-guard.ts'
import type { Cors } from './cors.ts'
import { createCredentialCache } from './credential-cache.ts'
import { thrownErrorResponse } from './error-handler.ts'
import { completeHeaders } from './json-response.ts'
import { pathOf, requestIdFor } from './request-context.ts'
import { type RequestEvent, requestEvent } from './request-event.ts'
import { flagNameFromPath, readFlagAnswer } from './routes/flag-routes.ts'
import { healthAnswer } from './routes/health-routes.ts'
import { evaluateAllAnswer, evaluateOneAnswer } from './routes/ofrep-routes.ts'
import type { StreamCredentials } from './stream-credentials.ts'

/** A handler Bun's router calls. */
export type Lane = (request: Request, server: Server<undefined>) => Response | Promise<Response>

/** Bun `routes`: lanes by path and method. */
export type Lanes = Record<string, { GET?: Lane; POST?: Lane }>

/** What the lanes need: the services they read, and what every answer goes through. */
export interface FastLaneDeps extends GuardDeps {
  flags: FlagService
  health: HealthService
  evaluations: EvaluationService
  streamCredentials: StreamCredentials
  bodyLimit: number
  cors: Cors | undefined
  onRequest: ((event: RequestEvent) => void) | undefined
  logError: (requestId: string, err: unknown) => void
}

const FLAGS_PREFIX = '/api/flags/'
const OFREP_PREFIX = '/ofrep/v1/evaluate/flags/'

/** Bun `routes` for the lanes; `full` is the full pipeline, which answers whatever a lane does not. */
export function createFastLanes(deps: FastLaneDeps, full: Lane): Lanes {
  const { cors, onRequest } = deps
  const credentials = createCredentialCache(deps)
  const finish = (
    request: Request,
    response: Response,
    path: string,
    route: string,
    startedAt: number,
    id: string,
    principal?: Principal,
  ) => {
    cors?.decorate(request, response)
    onRequest?.(requestEvent(request, path, route, response.status, startedAt, id, principal))
    return response
  }

  return {
    '/health': {
      GET(request, server) {
        const startedAt = performance.now()
        if (request.method !== 'GET' || request.url.includes('?')) return full(request, server)
        const id = requestIdFor(request)
        return finish(request, healthAnswer(deps.health, id), '/health', '/health', startedAt, id)
      },
    },
    '/api/flags/*': {
      GET(request, server) {
        const startedAt = performance.now()
        const url = request.url
        if (request.method !== 'GET' || url.includes('?')) return full(request, server)
        const headers = request.headers
        const principal = credentials.principal(headers)
        if (principal === undefined || !can(principal, 'flag:read')) return full(request, server)
        const path = pathOf(url)
        const id = requestIdFor(request, headers)
        let response: Response
        try {
          response = readFlagAnswer(deps.flags, principal, path.slice(FLAGS_PREFIX.length), headers.get('if-none-match'), id)
        } catch {
          return full(request, server) // not found, not visible, a bad name: the pipeline's answer
        }
        return finish(request, response, path, '/api/flags/{flagName}', startedAt, id, principal)
      },
    },
    // OFREP: once the body is read there is no handing over, so a lane answers from then on, failures too
    '/ofrep/v1/evaluate/flags': {
      async POST(request, server) {
        const startedAt = performance.now()
        const principal = credentials.principal(request.headers)
        if (principal === undefined || !can(principal, 'flag:evaluate')) return full(request, server)
        const id = requestIdFor(request)
        let response: Response
        try {
          response = await evaluateAllAnswer(deps, principal, request, id)
        } catch (err) {
          response = failure(deps, id, err)
        }
        return finish(request, response, pathOf(request.url), '/ofrep/v1/evaluate/flags', startedAt, id, principal)
      },
    },
    '/ofrep/v1/evaluate/flags/*': {
      async POST(request, server) {
        const startedAt = performance.now()
        const principal = credentials.principal(request.headers)
        if (principal === undefined || !can(principal, 'flag:evaluate')) return full(request, server)
        const path = pathOf(request.url)
        let key: string
        try {
          key = flagNameFromPath(path.slice(OFREP_PREFIX.length))
        } catch {
          return full(request, server)
        }
        if (key === '') return full(request, server)
        const id = requestIdFor(request)
        let response: Response
        try {
          response = await evaluateOneAnswer(deps, principal, key, request, id)
        } catch (err) {
          response = failure(deps, id, err)
        }
        return finish(request, response, path, '/ofrep/v1/evaluate/flags/{key}', startedAt, id, principal)
      },
    },
  }
}

/** The answer to an error thrown after a lane read the body: what the full pipeline gives. */
function failure(deps: FastLaneDeps, id: string, err: unknown): Response {
  const response = thrownErrorResponse(err, id, deps.logError)
  completeHeaders(response, id)
  return response
}
