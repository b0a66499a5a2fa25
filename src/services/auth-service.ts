/**
 * Logins, sessions behind tokens, and logout (contract §2). A token is only a pointer to a stored
 * session: every request re-reads the session and the user, so revocation and permission changes
 * take effect on the very next request. Token signing is the HTTP layer's business.
 */

import type { Actor } from '../domain/actor.ts'
import { InvalidError, TooManyRequestsError, UnauthorizedError } from '../domain/errors.ts'
import { isExpired, type StoredSession } from '../domain/session.ts'
import { toPublicUser, usernameKey, type PublicUser } from '../domain/user.ts'
import type { Store } from '../storage/json-file-store.ts'
import { ownEntry } from '../storage/state.ts'
import type { LoginThrottle } from './login-throttle.ts'
import { newId } from './new-id.ts'
import type { PasswordHasher } from './password-hasher.ts'
import type { Telemetry } from './telemetry.ts'

/** A successful login: the new session and its user. */
export interface LoginResult {
  session: StoredSession
  user: PublicUser
}

/** The authentication use cases. */
export interface AuthService {
  login(username: string, password: string, address: string): Promise<LoginResult>
  /** The actor behind a verified token's claims; throws `UnauthorizedError` if revoked or expired. */
  resolve(userId: string, sessionId: string): Actor
  logout(actor: Actor): Promise<string>
  /** Drops expired sessions from memory; they are written out with the next commit. */
  pruneExpired(): number
}

/** Options of the auth service. */
export interface AuthServiceOptions {
  tokenTtlSeconds: number
  telemetry?: Telemetry
  now?: () => Date
}

const LAST_USED_PRECISION_MS = 60_000
const BAD_CREDENTIALS = 'invalid username or password'

/** Creates the auth service. */
export function createAuthService(
  store: Store,
  hasher: PasswordHasher,
  throttle: LoginThrottle,
  options: AuthServiceOptions,
): AuthService {
  const now = options.now ?? (() => new Date())
  const lastUsed = new WeakMap<StoredSession, number>() // parsed lastUsedAt, to skip Date.parse per request
  return {
    async login(username, password, address) {
      if (username.length === 0) throw new InvalidError('username is required', 'username', 'required')
      if (password.length === 0) throw new InvalidError('password is required', 'password', 'required')
      const wait = throttle.retryAfter(username, address, now().getTime())
      if (wait > 0) throw new TooManyRequestsError(wait)
      const key = usernameKey(username)
      const user = Object.values(store.state.users).find((u) => usernameKey(u.username) === key)
      const ok = user ? await hasher.verify(password, user.passwordHash) : (await hasher.verifyDummy(password), false)
      if (!user || !ok) {
        throttle.recordFailure(username, address, now().getTime())
        options.telemetry?.loginFailed()
        throw new UnauthorizedError(BAD_CREDENTIALS)
      }
      throttle.recordSuccess(username)
      const started = now()
      const session: StoredSession = {
        id: newId('ses'),
        userId: user.id,
        createdAt: started.toISOString(),
        expiresAt: new Date(started.getTime() + options.tokenTtlSeconds * 1000).toISOString(),
        lastUsedAt: started.toISOString(),
      }
      return store.mutate((state) => {
        const current = ownEntry(state.users, user.id)
        if (!current) throw new UnauthorizedError(BAD_CREDENTIALS) // deleted while we hashed
        state.sessions[session.id] = session
        return { session: { ...session }, user: toPublicUser(current) }
      })
    },

    resolve(userId, sessionId) {
      const state = store.state
      const session = ownEntry(state.sessions, sessionId)
      const at = now().getTime()
      if (!session || session.userId !== userId || isExpired(session, at)) throw new UnauthorizedError('token is no longer valid')
      const user = ownEntry(state.users, userId)
      if (!user) throw new UnauthorizedError('token is no longer valid')
      let used = lastUsed.get(session)
      if (used === undefined) lastUsed.set(session, (used = Date.parse(session.lastUsedAt)))
      if (at - used >= LAST_USED_PRECISION_MS) {
        session.lastUsedAt = new Date(at).toISOString()
        lastUsed.set(session, at)
      }
      return { userId, username: user.username, sessionId, permissions: user.permissions }
    },

    async logout(actor) {
      await store.mutate((state) => {
        delete state.sessions[actor.sessionId]
      })
      return actor.sessionId
    },

    pruneExpired() {
      const at = now().getTime()
      let removed = 0
      for (const s of Object.values(store.state.sessions)) {
        if (isExpired(s, at)) {
          delete store.state.sessions[s.id]
          removed++
        }
      }
      return removed
    },
  }
}
