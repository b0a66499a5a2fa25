/**
 * The OpenFeature Remote Evaluation Protocol (contract §13, §14): single and bulk evaluation and the
 * OFREP event stream. These routes follow the protocol where it differs from the rest of the API:
 * unknown query parameters and body fields are ignored, and evaluation problems get OFREP's error
 * body. Credentials and permissions are checked first, with the §1.1 envelope, like everywhere else.
 */

import { Elysia, t } from 'elysia'
import { canSeeFlag, requirePermission } from '../../domain/access-policy.ts'
import { NotFoundError } from '../../domain/errors.ts'
import type { Principal } from '../../domain/principal.ts'
import type { EvaluationService } from '../../services/evaluation-service.ts'
import type { FlagChangeBatch, FlagChangeFeed } from '../../services/flag-change-feed.ts'
import { authenticateRequest, type GuardDeps, guard } from '../auth-guard.ts'
import type { StreamHub } from '../event-stream.ts'
import { noneMatch } from '../if-match.ts'
import { asComplete, jsonAnswer, notModifiedAnswer, taggedJsonAnswer } from '../json-response.ts'
import { OfrepProblem, readEvaluationContext } from '../ofrep-context.ts'
import { metaOf, principalOf } from '../request-context.ts'
import type { StreamCredentials } from '../stream-credentials.ts'
import { flagNameFromPath } from './flag-routes.ts'
import { ofrepDocs } from './ofrep-docs.ts'

/** Dependencies of the OFREP routes. */
export interface OfrepRouteDeps extends GuardDeps {
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
 * (a body over the limit) is thrown for the §1.1 envelope. The route and the fast lane answer with it.
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
    throw err
  }
}

/**
 * The answer to `POST /ofrep/v1/evaluate/flags` once the caller may evaluate: every visible flag
 * evaluated, with the ETag of the result and the event stream to follow, or `304` while the
 * client's ETag is current. The route and the fast lane answer with it.
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
  const tag = deps.evaluations.bulkTag(principal, context)
  if (noneMatch(request.headers.get('if-none-match'), tag)) return notModifiedAnswer(requestId, tag)
  const { etag, flags } = deps.evaluations.bulkJson(principal, context)
  const stream = `[{"type":"sse","endpoint":{"requestUri":"/ofrep/v1/events?ticket=${deps.streamCredentials.ticketFor(principal)}"},"inactivityDelaySec":${INACTIVITY_DELAY_SEC}}]`
  return taggedJsonAnswer(requestId, `{"flags":${flags},"eventStreams":${stream}}`, etag)
}

/** The OFREP routes. */
export function ofrepRoutes(deps: OfrepRouteDeps) {
  const { streams, streamCredentials } = deps
  const evaluateGuard = guard(deps, { permission: 'flag:evaluate' })

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

  return new Elysia({ name: 'ofrep-routes' })
    .post(
      '/ofrep/v1/evaluate/flags',
      async ({ request }) => asComplete(await evaluateAllAnswer(deps, principalOf(request), request, metaOf(request).id)),
      { ...evaluateGuard, detail: ofrepDocs.bulk },
    )
    .post(
      '/ofrep/v1/evaluate/flags/*',
      async ({ params, request }) =>
        asComplete(await evaluateOneAnswer(deps, principalOf(request), flagNameFromPath(params['*']), request, metaOf(request).id)),
      { ...evaluateGuard, detail: ofrepDocs.single },
    )
    .get(
      '/ofrep/v1/events',
      ({ request }) => {
        const principal = principalOf(request)
        metaOf(request).keepOpen?.()
        return streams.open({
          kind: 'ofrep',
          principal,
          stillValid: () => streamCredentials.refresh(principal, 'flag:evaluate') !== undefined,
        })
      },
      {
        query: t.Object({ ticket: t.Optional(t.String()) }, { additionalProperties: true }),
        // the credential headers as everywhere, or else the ticket (what a browser's EventSource can send)
        transform: async ({ request, query }: { request: Request; query: Record<string, string | undefined> }) => {
          const headers = request.headers
          const meta = metaOf(request)
          if (query.ticket !== undefined && headers.get('authorization') === null && headers.get('x-api-key') === null) {
            meta.principal = streamCredentials.principalOfTicket(query.ticket)
          } else await authenticateRequest(deps, request)
          if (meta.principal) requirePermission(meta.principal, 'flag:evaluate')
        },
        detail: ofrepDocs.events,
      },
    )
}
