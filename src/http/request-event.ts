/**
 * The one event per answered request that logs and metrics see, built by the pipeline for every
 * route. It never carries a body, a header or a token.
 */

import { type Principal, userIdOf } from '../domain/principal.ts'
import type { AccessEvent } from '../observability/logger.ts'

/** One answered request: the access line's fields and the route template metrics count it under. */
export interface RequestEvent extends AccessEvent {
  route: string
}

/** The event of `request`, answered with `status` at `at` (epoch ms), begun at `startedAt` (`performance.now()`). */
export function requestEvent(
  request: Request,
  path: string,
  route: string,
  status: number,
  startedAt: number,
  requestId: string,
  principal: Principal | undefined,
  at: number,
): RequestEvent {
  return {
    method: request.method,
    path,
    route,
    status,
    seconds: (performance.now() - startedAt) / 1000,
    requestId,
    userId: principal ? userIdOf(principal) : undefined,
    tokenId: principal?.kind === 'token' ? principal.tokenId : undefined,
    at,
  }
}
