/**
 * Credentials of event streams (docs/openfeature.md#ofrep). A browser's `EventSource` cannot send headers, so the
 * bulk evaluation answer advertises the OFREP stream with a `ticket`: an HMAC over the credential it
 * was obtained with (the session, or the API token), keyed by the signing secret. It allows only that
 * stream, acts as the same caller with the same scope, and stops working the moment its credential is
 * revoked or expires, because the principal is looked up afresh from it every time. The same fresh
 * look-up re-checks open streams at every event and heartbeat.
 */

import { createHmac, timingSafeEqual } from 'node:crypto'
import { can, canSomewhere } from '../domain/access-policy.ts'
import { UnauthorizedError } from '../domain/errors.ts'
import type { Permission } from '../domain/permission.ts'
import type { Principal } from '../domain/principal.ts'
import type { ApiTokenService } from '../services/api-token-service.ts'
import type { AuthService } from '../services/auth-service.ts'

/** Tickets and re-checks. */
export interface StreamCredentials {
  /** The ticket of a session or API-token principal. */
  ticketFor(principal: Principal): string
  /** The principal a ticket stands for, as of now; `UnauthorizedError` when bad, revoked or expired. */
  principalOfTicket(ticket: string): Principal
  /**
   * The principal as of now, if its credential is still valid and still holds `permission`: in
   * environment `env` when given, else in at least one (docs/environments.md#permissions).
   */
  refresh(principal: Principal, permission: Permission, env?: string): Principal | undefined
}

const PURPOSE = 'flagd ofrep events ticket\n'

/** Creates the ticket codec over the signing secret. */
export function createStreamCredentials(secret: string, deps: { auth: AuthService; apiTokens: ApiTokenService }): StreamCredentials {
  const sign = (payload: string) =>
    createHmac('sha256', secret)
      .update(PURPOSE + payload)
      .digest()
  const lookUp = (kind: string, a: string, b: string): Principal => {
    if (kind === 'u') return deps.auth.resolve(a, b)
    if (kind === 't') return deps.apiTokens.principalById(a)
    throw new UnauthorizedError('invalid ticket')
  }
  return {
    ticketFor(principal) {
      const payload =
        principal.kind === 'user'
          ? `u:${principal.userId}:${principal.sessionId}`
          : principal.kind === 'token'
            ? `t:${principal.tokenId}:`
            : undefined
      if (payload === undefined) throw new Error('the system principal has no stream ticket')
      return `${Buffer.from(payload).toString('base64url')}.${sign(payload).toString('base64url')}`
    },

    principalOfTicket(ticket) {
      const [body, mac] = ticket.length <= 512 ? ticket.split('.') : []
      if (!body || !mac) throw new UnauthorizedError('invalid ticket')
      const payload = Buffer.from(body, 'base64url').toString()
      const given = Buffer.from(mac, 'base64url')
      const expected = sign(payload)
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new UnauthorizedError('invalid ticket')
      const [kind, a, b] = payload.split(':') as [string, string, string]
      return lookUp(kind, a, b ?? '')
    },

    refresh(principal, permission, env) {
      try {
        const now =
          principal.kind === 'user'
            ? lookUp('u', principal.userId, principal.sessionId)
            : principal.kind === 'token'
              ? lookUp('t', principal.tokenId, '')
              : principal
        const holds = env === undefined ? canSomewhere(now, permission) : can(now, permission) || can(now, permission, env)
        return holds ? now : undefined
      } catch {
        return undefined
      }
    },
  }
}
