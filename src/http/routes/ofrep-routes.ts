/**
 * The OpenFeature Remote Evaluation Protocol (docs/openfeature.md#ofrep): single and bulk evaluation and the
 * OFREP event stream. These routes follow the protocol where it differs from the rest of the API:
 * unknown query parameters and body fields are ignored, and evaluation problems get OFREP's error
 * body. Credentials and permissions are checked first, with the error envelope (docs/api.md#conventions), like everywhere else.
 */

import { t } from 'elysia'
import { canSeeFlag } from '../../domain/access-policy.ts'
import { NotFoundError } from '../../domain/errors.ts'
import type { Principal } from '../../domain/principal.ts'
import type { EvaluationService } from '../../services/evaluation-service.ts'
import type { FlagChangeBatch, FlagChangeFeed } from '../../services/flag-change-feed.ts'
import { EvaluationFailed } from '../../services/flag-evaluator.ts'
import { jsonAnswer, notModifiedAnswer, taggedAnswer } from '../answers.ts'
import { type AuthDeps, authenticate } from '../authenticate.ts'
import type { StreamHub } from '../event-stream.ts'
import { noneMatch } from '../if-match.ts'
import { OfrepProblem, readEvaluationContext } from '../ofrep-context.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import type { StreamCredentials } from '../stream-credentials.ts'
import { flagNameFromPath } from './flag-routes.ts'
import { ofrepDocs } from './ofrep-docs.ts'

/** Dependencies of the OFREP routes. */
export interface OfrepRouteDeps extends AuthDeps {
  evaluations: EvaluationService
  changeFeed: FlagChangeFeed
  streams: StreamHub
  streamCredentials: StreamCredentials
  bodyLimit: number
}

/** How long a browser may leave the stream closed while hidden before it must re-fetch (OFREP ADR-0008). */
export const INACTIVITY_DELAY_SEC = 120

const ofrepError = (requestId: string, problem: OfrepProblem, key?: string) =>
  jsonAnswer(
    requestId,
    JSON.stringify({ ...(key === undefined ? {} : { key }), errorCode: problem.errorCode, errorDetails: problem.errorDetails }),
    problem.status,
  )

/**
 * The answer to `POST /ofrep/v1/evaluate/flags/{key}` once the caller may evaluate: reads the
 * context from the body and evaluates. Evaluation problems get OFREP's error body; anything else
 * (a body over the limit) is thrown for the error envelope (docs/api.md#conventions).
 */
export async function evaluateOneAnswer(
  deps: Pick<OfrepRouteDeps, 'evaluations' | 'bodyLimit'>,
  principal: Principal,
  key: string,
  request: Request,
  requestId: string,
): Promise<Response> {
  try {
    const context = await readEvaluationContext(request, deps.bodyLimit)
    return jsonAnswer(requestId, deps.evaluations.oneJson(principal, key, context))
  } catch (err) {
    if (err instanceof OfrepProblem) return ofrepError(requestId, err, key)
    if (err instanceof NotFoundError) return ofrepError(requestId, new OfrepProblem(404, 'FLAG_NOT_FOUND', err.message), key)
    // a rule that cannot decide: OFREP's GENERAL, so the SDK serves the application's default (docs/targeting.md#rules)
    if (err instanceof EvaluationFailed) return ofrepError(requestId, new OfrepProblem(400, 'GENERAL', err.details), key)
    throw err
  }
}

/**
 * The answer to `POST /ofrep/v1/evaluate/flags` once the caller may evaluate: every visible flag
 * evaluated, with the ETag of the result and the event stream to follow, or `304` while the
 * client's ETag is current.
 */
export async function evaluateAllAnswer(
  deps: Pick<OfrepRouteDeps, 'evaluations' | 'bodyLimit' | 'streamCredentials'>,
  principal: Principal,
  request: Request,
  requestId: string,
): Promise<Response> {
  let context: Awaited<ReturnType<typeof readEvaluationContext>>
  try {
    context = await readEvaluationContext(request, deps.bodyLimit)
  } catch (err) {
    if (err instanceof OfrepProblem) return ofrepError(requestId, err)
    throw err
  }
  // only the tag of this very context says the answer is unchanged, never `*`
  const ifNoneMatch = request.headers.get('if-none-match')
  const answer = deps.evaluations.bulk(principal, context, (etag) => noneMatch(ifNoneMatch, etag, false))
  if (answer.unchanged) return notModifiedAnswer(requestId, answer.etag)
  const { etag, flags } = answer
  const stream = `[{"type":"sse","endpoint":{"requestUri":"/ofrep/v1/events?ticket=${deps.streamCredentials.ticketFor(principal)}"},"inactivityDelaySec":${INACTIVITY_DELAY_SEC}}]`
  return taggedAnswer(requestId, `{"flags":${flags},"eventStreams":${stream}}`, etag)
}

/** The OFREP routes. */
export function ofrepRoutes(deps: OfrepRouteDeps): RouteSpec[] {
  const { streams, streamCredentials } = deps

  // one subscription for every OFREP stream: each batch of committed changes becomes one event per
  // stream that can see at least one of the changed flags (before or after a rename)
  deps.changeFeed.subscribe((batch: FlagChangeBatch) => {
    const last = batch.changes.at(-1)
    if (!last) return
    const text = `id: ${last.id}\ndata: {"type":"refetchEvaluation","etag":"${batch.revision}","lastModified":${Math.floor(Date.parse(last.at) / 1000)}}\n\n`
    streams.broadcast((stream) => {
      if (stream.kind !== 'ofrep') return undefined
      const p = stream.principal
      return batch.changes.some((c) => canSeeFlag(p, c.name) || (c.previousName !== undefined && canSeeFlag(p, c.previousName)))
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
      handle: (c) => evaluateAllAnswer(deps, c.auth, c.request, c.id),
      docs: ofrepDocs.bulk,
    }),
    route({
      method: 'POST',
      path: '/ofrep/v1/evaluate/flags/*',
      permission: 'flag:evaluate',
      handle: (c) => evaluateOneAnswer(deps, c.auth, flagNameFromPath(c.params['*']), c.request, c.id),
      docs: ofrepDocs.single,
    }),
    route({
      method: 'GET',
      path: '/ofrep/v1/events',
      permission: 'flag:evaluate',
      query: t.Object({ ticket: t.Optional(t.String()) }, { additionalProperties: true }),
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
        const principal = c.auth
        c.keepOpen()
        return streams.open({
          kind: 'ofrep',
          principal,
          stillValid: () => streamCredentials.refresh(principal, 'flag:evaluate') !== undefined,
          requestId: c.id,
        })
      },
      docs: ofrepDocs.events,
    }),
  ]
}
