/**
 * The OpenFeature Remote Evaluation Protocol (docs/openfeature.md#ofrep): single and bulk evaluation and the
 * OFREP event stream. These routes follow the protocol where it differs from the rest of the API:
 * unknown query parameters and body fields are ignored, and evaluation problems get OFREP's error
 * body. Credentials and permissions are checked first, with the error envelope (docs/api.md#conventions), like everywhere else;
 * the pipeline then reads the context (`readEvaluationContext`, the routes' body step) and answers
 * evaluation problems in OFREP's shape (`ofrepErrorAnswer`, error-handler.ts).
 */

import { t } from 'elysia'
import { can, canSeeFlag, requirePermission } from '../../domain/access-policy.ts'
import { AppError } from '../../domain/errors.ts'
import type { EvaluationContext } from '../../domain/evaluation.ts'
import { environmentOf, type Principal } from '../../domain/principal.ts'
import type { EnvironmentService } from '../../services/environment-service.ts'
import type { EvaluationService } from '../../services/evaluation-service.ts'
import type { FlagChangeBatch, FlagChangeFeed } from '../../services/flag-change-feed.ts'
import { jsonAnswer, notModifiedAnswer, taggedAnswer } from '../answers.ts'
import { type AuthDeps, authenticate } from '../authenticate.ts'
import type { StreamHub } from '../event-stream.ts'
import { noneMatch } from '../if-match.ts'
import { readEvaluationContext } from '../ofrep-context.ts'
import type { RequestContext } from '../request-context.ts'
import { type QueryOf, type RouteSpec, route } from '../route-spec.ts'
import type { StreamCredentials } from '../stream-credentials.ts'
import { flagNameFromPath } from './flag-routes.ts'
import { ofrepDocs } from './ofrep-docs.ts'

/** Dependencies of the OFREP routes. */
export interface OfrepRouteDeps extends AuthDeps {
  evaluations: EvaluationService
  environments: Pick<EnvironmentService, 'defaultName' | 'has'>
  changeFeed: FlagChangeFeed
  streams: StreamHub
  streamCredentials: StreamCredentials
  bodyLimit: number
}

/** How long a browser may leave the stream closed while hidden before it must re-fetch (OFREP ADR-0008). */
export const INACTIVITY_DELAY_SEC = 120

/**
 * The answer to `POST /ofrep/v1/evaluate/flags` for a caller who may evaluate and the context the
 * pipeline read: every visible flag evaluated, with the ETag of the result and the event stream to
 * follow, or `304` while the client's ETag is current.
 */
export function evaluateAllAnswer(
  deps: Pick<OfrepRouteDeps, 'evaluations' | 'streamCredentials'>,
  principal: Principal,
  context: EvaluationContext,
  request: Request,
  requestId: string,
): Response {
  // only the tag of this very context says the answer is unchanged, never `*`
  const ifNoneMatch = request.headers.get('if-none-match')
  const answer = deps.evaluations.bulk(principal, context, (etag) => noneMatch(ifNoneMatch, etag, false))
  if (answer.unchanged) return notModifiedAnswer(requestId, answer.etag)
  const { etag, flags } = answer
  // a session's environment goes along: the stream tells of the environment these answers are of
  const env =
    principal.kind === 'user' && principal.environment !== undefined ? `&environment=${encodeURIComponent(principal.environment)}` : ''
  const stream = `[{"type":"sse","endpoint":{"requestUri":"/ofrep/v1/events?ticket=${deps.streamCredentials.ticketFor(principal)}${env}"},"inactivityDelaySec":${INACTIVITY_DELAY_SEC}}]`
  return taggedAnswer(requestId, `{"flags":${flags},"eventStreams":${stream}}`, etag)
}

const flagKey = (c: RequestContext) => flagNameFromPath(c.params['*'])

/** OFREP's query: other parameters are ignored, as the protocol says; `environment` is a session's (docs/environments.md). */
const OfrepQuery = t.Object(
  { environment: t.Optional(t.String({ description: "A session's environment to evaluate (a token evaluates its own)" })) },
  { additionalProperties: true },
)

/** The OFREP routes. */
export function ofrepRoutes(deps: OfrepRouteDeps): RouteSpec[] {
  const { streams, streamCredentials } = deps
  /** The caller as it evaluates: a session with `?environment=` evaluates that one (404 when unknown); a token, its own. */
  const evaluating = (c: RequestContext<QueryOf<typeof OfrepQuery>>): Principal => {
    const env = c.query.environment
    const p = c.auth
    if (env === undefined || p.kind !== 'user') return p
    // the envelope's 404 (an AppError, not NotFoundError, which OFREP's error table reads as FLAG_NOT_FOUND)
    if (!deps.environments.has(env)) throw new AppError('NOT_FOUND', `no environment named ${JSON.stringify(env)}`)
    return { ...p, environment: env }
  }

  // one subscription for every OFREP stream: each batch of committed changes becomes one event per
  // stream that can see at least one of the changed flags (before or after a rename)
  deps.changeFeed.subscribe((batch: FlagChangeBatch) => {
    const last = batch.changes.at(-1)
    if (!last) return
    const text = `id: ${last.id}\ndata: {"type":"refetchEvaluation","etag":"${batch.revision}","lastModified":${Math.floor(Date.parse(last.at) / 1000)}}\n\n`
    streams.broadcast((stream) => {
      if (stream.kind !== 'ofrep') return undefined
      const p = stream.principal
      // a change confined to another environment is no event for this one (docs/environments.md)
      const env = environmentOf(p) ?? deps.environments.defaultName
      return batch.changes.some(
        (c) =>
          (c.environments === undefined || c.environments.includes(env)) &&
          (canSeeFlag(p, c.name) || (c.previousName !== undefined && canSeeFlag(p, c.previousName))),
      )
        ? text
        : undefined
    })
  })

  return [
    route({
      method: 'POST',
      path: '/ofrep/v1/evaluate/flags',
      compress: true,
      permission: 'flag:evaluate',
      query: OfrepQuery,
      body: { limit: deps.bodyLimit, read: readEvaluationContext },
      ofrep: {},
      handle: (c) => evaluateAllAnswer(deps, evaluating(c), c.body as EvaluationContext, c.request, c.id),
      docs: ofrepDocs.bulk,
    }),
    route({
      method: 'POST',
      path: '/ofrep/v1/evaluate/flags/*',
      permission: 'flag:evaluate',
      query: OfrepQuery,
      body: { limit: deps.bodyLimit, read: readEvaluationContext },
      ofrep: { key: flagKey },
      handle: (c) => jsonAnswer(c.id, deps.evaluations.one(evaluating(c), flagKey(c), c.body as EvaluationContext).text),
      docs: ofrepDocs.single,
    }),
    route({
      method: 'GET',
      path: '/ofrep/v1/events',
      permission: 'flag:evaluate',
      // a session's ?environment= as on the evaluation routes, declared so the handler reads it typed
      query: t.Object({ ticket: t.Optional(t.String()), ...OfrepQuery.properties }, { additionalProperties: true }),
      // the credential headers as everywhere, or else the ticket (what a browser's EventSource can send)
      authenticate(c) {
        const headers = c.request.headers
        const ticket = c.query.ticket
        if (ticket !== undefined && headers.get('authorization') === null && headers.get('x-api-key') === null) {
          return streamCredentials.principalOfTicket(ticket)
        }
        return authenticate(deps, headers)
      },
      handle(c) {
        // a session's ?environment= as on the evaluation routes (docs/environments.md#evaluation)
        const principal = evaluating(c)
        const env = environmentOf(principal) ?? deps.environments.defaultName
        if (!can(principal, 'flag:evaluate')) requirePermission(principal, 'flag:evaluate', env)
        c.keepOpen()
        return streams.open({
          kind: 'ofrep',
          principal,
          stillValid: () => streamCredentials.refresh(principal, 'flag:evaluate', env) !== undefined,
          requestId: c.id,
        })
      },
      docs: ofrepDocs.events,
    }),
  ]
}
