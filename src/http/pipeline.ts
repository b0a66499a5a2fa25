/**
 * The one request pipeline every route goes through, hot or not. For a route it makes one handler
 * that owns, once each and in this order: the request id, the CORS preflight, the query, the caller
 * (authentication, permission, scope, path-dependent checks), the body (limits, parsing, schema),
 * the route's answer, the mapping of anything thrown to an error answer, CORS headers, and the
 * request event that metrics and the access log see (labelled with the route's template, known
 * when the route is declared).
 *
 * It stays synchronous until a step must wait: a read whose credential this process already knows
 * runs from the first line to the answer without a promise, which is what keeps the hot reads at
 * the floor of docs/performance.md. Anything that waits (a first-seen token, a body, an
 * async handler) continues on the same steps through `then`.
 */

import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { parseQueryFromURL } from 'elysia/parse-query'
import { requirePermissionSomewhere, requireUnscoped } from '../domain/access-policy.ts'
import type { Clock } from '../domain/clock.ts'
import { AppError } from '../domain/errors.ts'
import type { Principal } from '../domain/principal.ts'
import type { RequestCache } from '../domain/request-cache.ts'
import { jsonAnswer } from './answers.ts'
import { type AuthDeps, authenticate } from './authenticate.ts'
import { readJsonBody } from './body-reader.ts'
import type { ClientAddressOf } from './client-address.ts'
import { codingFor, createCompressor } from './compression.ts'
import { connectErrorAnswer } from './connect-protocol.ts'
import type { Cors } from './cors.ts'
import { createCredentialCache } from './credential-cache.ts'
import { ofrepErrorAnswer, problemMessage, thrownAnswer, validationProblem } from './error-handler.ts'
import { type Listening, RequestContext, requestIdFor } from './request-context.ts'
import { type RequestEvent, requestEvent } from './request-event.ts'
import { documentedPath, type RouteSpec } from './route-spec.ts'

/** What the pipeline needs besides the routes. */
export interface PipelineDeps extends AuthDeps {
  /** Where known credentials are kept (the daemon's request cache). */
  cache: RequestCache
  /** The flags' revision: what compressed answers are kept for (docs/architecture.md#caching). */
  flagsRevision: () => number
  cors: Cors | undefined
  clientAddress: ClientAddressOf
  /** The process's clock: the access line's time (docs/development.md#time). */
  now: Clock
  /** Called once per answered request (logs and metrics). */
  onRequest: ((event: RequestEvent) => void) | undefined
  /** Where unexpected errors are reported (with the request id). */
  logError: (requestId: string, err: unknown) => void
}

/** A served route: the request (and how it arrived; its path when the router has it) in, the answer out. */
export type RouteHandler = (request: Request, server: Listening | null, path?: string) => Response | Promise<Response>

/** The pipeline: turns a declared route into its handler. */
export interface Pipeline {
  serve(spec: RouteSpec): RouteHandler
}

type Answer = Response | Promise<Response>

const isPromise = (value: unknown): value is Promise<unknown> => value instanceof Promise

type Checker = ReturnType<typeof TypeCompiler.Compile>

// one compiled checker per schema, made on first use: many routes share one schema (NoQuery), and a
// route never called costs nothing (start-up time and idle memory are in the bench's goals)
const checkers = new WeakMap<TSchema, Checker>()
function checkerOf(schema: TSchema): Checker {
  let checker = checkers.get(schema)
  if (checker === undefined) checkers.set(schema, (checker = TypeCompiler.Compile(schema)))
  return checker
}

/** Problems with a schema, as the API's 400 (docs/api.md#errors): the first one (a few are read, to name a typo). */
function schemaFailure(checker: Checker, value: unknown, where: 'body' | 'query'): AppError {
  const errors = []
  for (const e of checker.Errors(value)) if (errors.push(e) >= 16) break
  const problem = validationProblem(errors, where)
  return new AppError('INVALID_REQUEST', problemMessage(problem), { ...problem })
}

/** Builds the pipeline (see module comment). */
export function createPipeline(deps: PipelineDeps): Pipeline {
  const { cors, onRequest, logError } = deps
  const credentials = createCredentialCache(deps, deps.cache)
  const compressed = createCompressor(deps.cache, deps.flagsRevision)

  return {
    serve(spec) {
      const label = spec.label ?? documentedPath(spec)
      const prefix = spec.path.endsWith('*') ? spec.path.length - 1 : -1
      // the path's `:name` segments by position, worked out once per route
      const template = spec.path.split('/')
      const named = template.flatMap((part, i) => (part.startsWith(':') ? [[i, part.slice(1)] as const] : []))
      const query = spec.query
      const body = spec.body
      const authenticated = spec.authenticate !== false

      const params = (c: RequestContext): Record<string, string> => {
        if (prefix >= 0) return { '*': c.path.slice(prefix) }
        const out: Record<string, string> = {}
        const actual = c.path.split('/')
        for (const [i, name] of named) out[name] = decoded(actual[i] ?? '')
        return out
      }

      // the steps after the caller is known: permission checks, then the body, then the answer
      const authorized = (c: RequestContext): Answer => {
        const p = c.principal
        if (p !== undefined) {
          if (spec.permission) requirePermissionSomewhere(p, spec.permission)
          if (spec.unscoped) requireUnscoped(p, spec.unscoped === true ? undefined : spec.unscoped)
          if (spec.authorize) spec.authorize(p, c.params)
        }
        if (body === undefined) return answer(c)
        if (body.read !== undefined)
          return body.read(c.request, body.limit).then((value) => {
            c.body = value
            return answer(c)
          })
        return readJsonBody(c.request, body.limit, body.small).then((value) => {
          const checker = body.schema && checkerOf(body.schema)
          if (checker && !checker.Check(value)) throw schemaFailure(checker, value, 'body')
          c.body = value
          return answer(c)
        })
      }

      const answer = (c: RequestContext): Answer => {
        const result = spec.handle(c)
        if (isPromise(result)) return result.then((value) => asResponse(c, value))
        return asResponse(c, result)
      }

      const withCaller = (c: RequestContext, principal: Principal): Answer => {
        c.principal = principal
        return authorized(c)
      }

      const steps = (c: RequestContext): Answer => {
        const preflight = cors?.preflight(c.request, c.id)
        if (preflight !== undefined) return preflight
        if (query !== undefined) {
          const url = c.request.url
          const at = url.indexOf('?')
          // no query string passes any schema without required parameters (the hot reads)
          if (at !== -1 || (query.required?.length ?? 0) > 0) {
            const values = at === -1 ? {} : parseQueryFromURL(url, at + 1)
            const checker = checkerOf(query)
            if (!checker.Check(values)) throw schemaFailure(checker, values, 'query')
            c.query = values
          }
        }
        if (prefix >= 0 || named.length > 0) c.params = params(c)
        if (!authenticated) return authorized(c)
        if (typeof spec.authenticate === 'function') {
          const found = spec.authenticate(c)
          return isPromise(found) ? found.then((p) => withCaller(c, p)) : withCaller(c, found)
        }
        const known = credentials.principal(c.request.headers)
        if (known !== undefined) return withCaller(c, known)
        return authenticate(deps, c.request.headers).then((p) => withCaller(c, p))
      }

      // what was thrown, as the error envelope, or in OFREP's or Connect's shape on their routes
      const ofrep = spec.ofrep
      const connect = spec.connect
      const failed = (err: unknown, c: RequestContext): Response =>
        (ofrep && ofrepErrorAnswer(err, c.id, ofrep.key && keyOf(ofrep.key, c))) ||
        (connect && connectErrorAnswer(err, c.request, c.id, connect.streaming, logError)) ||
        thrownAnswer(err, c.id, logError)

      const finish = (c: RequestContext, response: Response, startedAt: number): Response | Promise<Response> => {
        const coding = spec.compress && response.status === 200 ? codingFor(c.request.headers.get('accept-encoding')) : undefined
        if (coding !== undefined) return compressed(response, coding).then((out) => done(c, out, startedAt))
        return done(c, response, startedAt)
      }
      const done = (c: RequestContext, response: Response, startedAt: number): Response => {
        cors?.decorate(c.request, response)
        onRequest?.(requestEvent(c.request, c.path, label, response.status, startedAt, c.id, c.principal, deps.now().getTime()))
        return response
      }

      return (request, server, path) => {
        const startedAt = performance.now()
        const c = new RequestContext(request, requestIdFor(request.headers), server, deps.clientAddress, path)
        let out: Answer
        try {
          out = steps(c)
        } catch (err) {
          out = failed(err, c)
        }
        if (isPromise(out)) {
          return out.then(
            (response) => finish(c, response, startedAt),
            (err: unknown) => finish(c, failed(err, c), startedAt),
          )
        }
        return finish(c, out, startedAt)
      }
    },
  }
}

/** A path segment percent-decoded, or as sent when it is not valid percent-encoding (it then matches nothing). */
function decoded(segment: string): string {
  if (!segment.includes('%')) return segment
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** The flag an OFREP error names, when its path names one that can be read. */
function keyOf(key: (c: RequestContext) => string, c: RequestContext): string | undefined {
  try {
    return key(c)
  } catch {
    return undefined
  }
}

/** A handler's result as a Response: data is sent as JSON `200`. */
function asResponse(c: RequestContext, value: unknown): Response {
  return value instanceof Response ? value : jsonAnswer(c.id, JSON.stringify(value))
}
