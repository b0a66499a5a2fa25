/** Listing and ending sessions (docs/api.md#authentication). */

import { authorizeSessionDelete, requirePermission } from '../domain/access-policy.ts'
import type { Clock } from '../domain/clock.ts'
import { NotFoundError } from '../domain/errors.ts'
import type { Caller, Principal } from '../domain/principal.ts'
import { isExpired, type PublicSession } from '../domain/session.ts'
import type { Store } from '../storage/store.ts'
import { commitMeta } from './commit-meta.ts'

/** The session use cases. */
export interface SessionService {
  list(principal: Principal): PublicSession[]
  remove(caller: Caller, sessionId: string): Promise<void>
}

/** Creates the session service. */
export function createSessionService(store: Store, now: Clock): SessionService {
  const notFound = (id: string) => new NotFoundError(`no session with id ${JSON.stringify(id)}`)
  return {
    list(principal) {
      requirePermission(principal, 'session:read')
      const at = now().getTime()
      const { sessions, users } = store.committed()
      const own = principal.kind === 'user' ? principal.sessionId : undefined
      return (
        [...sessions.values()]
          // a single sign-on's session waiting for its code is not one yet
          .filter((s) => !isExpired(s, at) && users.has(s.userId) && !s.pendingCode)
          .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1))
          .map((s) => ({
            id: s.id,
            userId: s.userId,
            username: users.get(s.userId)?.username ?? '',
            createdAt: s.createdAt,
            expiresAt: s.expiresAt,
            lastUsedAt: store.lastUsed('sessions', s),
            current: s.id === own,
          }))
      )
    },

    async remove(caller, sessionId) {
      const session = store.committed().sessions.get(sessionId)
      if (!session || isExpired(session, now().getTime())) throw notFound(sessionId)
      authorizeSessionDelete(caller.principal, session.userId)
      await store.transact(commitMeta(caller), (tx) => {
        if (!tx.read.sessions.has(sessionId)) throw notFound(sessionId)
        tx.delete('sessions', sessionId)
      })
    },
  }
}
