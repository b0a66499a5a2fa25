/**
 * The one event per answered request that logs and metrics see, built the same way by the full
 * pipeline and the fast lanes. It never carries a body, a header or a token.
 */

import { userIdOf, type Principal } from '../domain/principal.ts'

/** One answered request. */
export interface RequestEvent {
  method: string
  path: string
  route: string
  status: number
  seconds: number
  requestId: string
  userId: string | undefined
  /** The API token that authenticated the request, if one did. */
  tokenId: string | undefined
  /** When the answer was ready, in ms since the epoch. */
  at: number
}

/** The event of `request`, answered with `status`, begun at `startedAt` (`performance.now()`). */
export function requestEvent(request: Request, path: string, route: string, status: number, startedAt: number, requestId: string, principal: Principal | undefined): RequestEvent {
  return {
    method: request.method,
    path,
    route,
    status,
    seconds: (performance.now() - startedAt) / 1000,
    requestId,
    userId: principal ? userIdOf(principal) : undefined,
    tokenId: principal?.kind === 'token' ? principal.tokenId : undefined,
    at: Date.now(),
  }
}
