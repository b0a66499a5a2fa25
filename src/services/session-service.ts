/** Listing and ending sessions (contract §8). */

import { can, requirePermission, type Actor } from '../domain/actor.ts'
import { NotFoundError } from '../domain/errors.ts'
import { isExpired, type PublicSession } from '../domain/session.ts'
import type { Store } from '../storage/json-file-store.ts'
import { ownEntry } from '../storage/state.ts'

/** The session use cases. */
export interface SessionService {
  list(actor: Actor): PublicSession[]
  remove(actor: Actor, sessionId: string): Promise<void>
}

/** Creates the session service. */
export function createSessionService(store: Store, now: () => Date = () => new Date()): SessionService {
  return {
    list(actor) {
      requirePermission(actor, 'session:read')
      const at = now().getTime()
      const { sessions, users } = store.state
      return Object.values(sessions)
        .filter((s) => !isExpired(s, at) && ownEntry(users, s.userId))
        .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1))
        .map((s) => ({
          id: s.id,
          userId: s.userId,
          username: ownEntry(users, s.userId)?.username ?? '',
          createdAt: s.createdAt,
          expiresAt: s.expiresAt,
          lastUsedAt: s.lastUsedAt,
          current: s.id === actor.sessionId,
        }))
    },

    async remove(actor, sessionId) {
      const session = ownEntry(store.state.sessions, sessionId)
      if (!session || isExpired(session, now().getTime())) throw new NotFoundError(`no session with id ${JSON.stringify(sessionId)}`)
      if (session.userId !== actor.userId && !can(actor, 'session:write')) requirePermission(actor, 'session:write')
      await store.mutate((state) => {
        delete state.sessions[sessionId]
      })
    },
  }
}
