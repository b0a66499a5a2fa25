/**
 * Logins, sessions behind tokens, and logout (docs/api.md#authentication). A token is only a pointer to a stored
 * session: every request re-reads the session and the user from the committed snapshot, so
 * revocation and permission changes take effect on the very next request. Token signing is the
 * HTTP layer's business.
 */

import { requireSession } from '../domain/access-policy.ts'
import type { Clock } from '../domain/clock.ts'
import { codePointCount } from '../domain/code-points.ts'
import { InvalidError, TooManyRequestsError, UnauthorizedError } from '../domain/errors.ts'
import { newId } from '../domain/new-id.ts'
import { type Caller, systemPrincipal, type UserPrincipal } from '../domain/principal.ts'
import { isExpired, type StoredSession } from '../domain/session.ts'
import { PASSWORD_MAX, type PublicUser, type StoredUser, toPublicUser, USERNAME_MAX } from '../domain/user.ts'
import type { Snapshot, Store } from '../storage/store.ts'
import { commitMeta } from './commit-meta.ts'
import type { LoginThrottle } from './login-throttle.ts'
import type { PasswordHasher } from './password-hasher.ts'
import type { Telemetry } from './telemetry.ts'
import { findUserByName } from './user-service.ts'

/** A successful login: the new session and its user. */
export interface LoginResult {
  session: StoredSession
  user: PublicUser
  /** The moment its lifetime starts (the token's `iat`): `expiresAt` is this plus the lifetime, exactly. */
  issuedAt: Date
}

/** The authentication use cases. */
export interface AuthService {
  login(username: string, password: string, address: string, requestId: string): Promise<LoginResult>
  /**
   * A session of `user`, who signed in elsewhere (the identity provider, docs/single-sign-on.md),
   * pending until `claimSession` claims it: no credential before, and only once.
   */
  openSession(user: StoredUser, requestId: string): Promise<LoginResult>
  /** Turns a pending session into a session (`401` when it is unknown, claimed already or past its 60 s). */
  claimSession(sessionId: string, requestId: string): Promise<LoginResult>
  /** The principal behind a verified token's claims; throws `UnauthorizedError` if revoked or expired. */
  resolve(userId: string, sessionId: string): UserPrincipal
  /**
   * The committed state every credential is checked against. Immutable: a logout, a revocation or
   * a changed user is a commit, and every commit makes a new one, so its identity tells whether a
   * principal found earlier may still be current (the pipeline's credential cache).
   */
  credentialState(): Snapshot
  /** The time credentials are judged at (ms): the services' clock, so a cache of them agrees with it. */
  clock(): number
  /** Ends the caller's own session; returns its id. */
  logout(caller: Caller): Promise<string>
  /** Deletes expired sessions (housekeeping); returns how many. */
  pruneExpired(): Promise<number>
  /** Forgets the failed-login counts of `username` (after a password reset, or `flagd user unlock`). */
  unlock(username: string): Promise<void>
  /** Catches up with credentials created on other replicas a moment ago (see `Store.refresh`). */
  refreshCredentials(): Promise<void>
}

/** Options of the auth service. */
export interface AuthServiceOptions {
  tokenTtlSeconds: number
  telemetry?: Telemetry
  now: Clock
}

const LAST_USED_PRECISION_MS = 60_000
const BAD_CREDENTIALS = 'invalid username or password'

/** How long a single sign-on's session waits for its one-time code (docs/single-sign-on.md). */
const PENDING_SECONDS = 60

/** Creates the auth service. */
export function createAuthService(store: Store, hasher: PasswordHasher, throttle: LoginThrottle, options: AuthServiceOptions): AuthService {
  const now = options.now
  const nowMs = () => now().getTime()
  const lastUsed = new WeakMap<StoredSession, number>() // parsed last use, to skip Date.parse per request
  // the principal of a session, made again only when its user row changes (stored rows are frozen and
  // replaced on change, so identity tells): no new object per authenticated request
  const principals = new WeakMap<StoredSession, { user: StoredUser; principal: UserPrincipal }>()
  /**
   * A new session of `user`, stored; `stillValid` re-checks the row in the transaction (a login:
   * the password it checked is still the one).
   */
  const openSession = async (user: StoredUser, requestId: string, stillValid: (current: StoredUser) => boolean, pending = false) => {
    const started = now()
    const session: StoredSession = {
      id: newId('ses'),
      userId: user.id,
      createdAt: started.toISOString(),
      expiresAt: new Date(started.getTime() + (pending ? PENDING_SECONDS : options.tokenTtlSeconds) * 1000).toISOString(),
      lastUsedAt: started.toISOString(),
      ...(pending ? { pendingCode: true as const } : {}),
    }
    const principal: UserPrincipal = {
      kind: 'user',
      userId: user.id,
      username: user.username,
      sessionId: session.id,
      permissions: user.permissions,
      flagPrefixes: user.flagPrefixes ?? [],
    }
    const out = await store.transact(commitMeta({ principal, requestId }), (tx) => {
      const current = tx.read.users.get(user.id)
      // deleted, or given a new password, while we checked the old one: no session from it
      if (!current || !stillValid(current)) throw new UnauthorizedError(BAD_CREDENTIALS)
      tx.put('sessions', session)
      return { session, user: toPublicUser(current), issuedAt: started }
    })
    return out.result
  }
  return {
    async login(username, password, address, requestId) {
      if (username.length === 0) throw new InvalidError('username is required', 'username', 'required')
      if (password.length === 0) throw new InvalidError('password is required', 'password', 'required')
      // No such credential can exist: refuse at once, without hashing and without keeping the value.
      if (username.length > USERNAME_MAX || codePointCount(password, PASSWORD_MAX) > PASSWORD_MAX) {
        options.telemetry?.loginFailed()
        throw new UnauthorizedError(BAD_CREDENTIALS)
      }
      const attempt = await throttle.begin(username, address, () => now().getTime())
      if (typeof attempt === 'number') throw new TooManyRequestsError(attempt)
      let ok = false
      let user = findUserByName(store.committed(), username)
      try {
        if (!user) {
          // perhaps created on another replica a moment ago
          await store.refresh()
          user = findUserByName(store.committed(), username)
        }
        // a person who signs in through the identity provider has no password here: as an unknown name
        if (user && user.source !== 'oidc') ok = await hasher.verify(password, user.passwordHash)
        else await hasher.verifyDummy(password) // the same work for an unknown name: no timing oracle
      } finally {
        if (user && ok) attempt.succeeded()
        else await attempt.failed() // also when the check itself threw: a reservation is always settled
      }
      if (!user || !ok) {
        options.telemetry?.loginFailed()
        throw new UnauthorizedError(BAD_CREDENTIALS)
      }
      return openSession(user, requestId, (current) => current.passwordHash === (user as StoredUser).passwordHash)
    },

    openSession: (user, requestId) => openSession(user, requestId, () => true, true),

    async claimSession(sessionId, requestId) {
      const refused = () => new UnauthorizedError('this sign-in code is unknown, used or expired: sign in again')
      const pending = store.committed().sessions.get(sessionId)
      const user = pending && store.committed().users.get(pending.userId)
      if (!pending?.pendingCode || !user) throw refused()
      const principal: UserPrincipal = {
        kind: 'user',
        userId: user.id,
        username: user.username,
        sessionId,
        permissions: user.permissions,
        flagPrefixes: user.flagPrefixes ?? [],
      }
      // claimed in a transaction on the stored row: once, whichever replica is asked
      const out = await store.transact(commitMeta({ principal, requestId }), (tx) => {
        const current = tx.read.sessions.get(sessionId)
        const owner = current && tx.read.users.get(current.userId)
        if (!current?.pendingCode || !owner || isExpired(current, now().getTime())) throw refused()
        const { pendingCode: _claimed, ...rest } = current
        const issuedAt = now()
        const session: StoredSession = { ...rest, expiresAt: new Date(issuedAt.getTime() + options.tokenTtlSeconds * 1000).toISOString() }
        tx.put('sessions', session)
        return { session, user: toPublicUser(owner), issuedAt }
      })
      return out.result
    },

    credentialState: () => store.committed(),
    clock: nowMs,

    resolve(userId, sessionId) {
      const snapshot = store.committed()
      const session = snapshot.sessions.get(sessionId)
      const at = nowMs()
      if (!session || session.userId !== userId || isExpired(session, at) || session.pendingCode)
        throw new UnauthorizedError('token is no longer valid')
      const user = snapshot.users.get(userId)
      if (!user) throw new UnauthorizedError('token is no longer valid')
      let used = lastUsed.get(session)
      if (used === undefined) lastUsed.set(session, (used = Date.parse(store.lastUsed('sessions', session))))
      if (at - used >= LAST_USED_PRECISION_MS) {
        store.touch('sessions', sessionId, new Date(at).toISOString())
        lastUsed.set(session, at)
      }
      let known = principals.get(session)
      if (known === undefined || known.user !== user) {
        known = {
          user,
          principal: Object.freeze({
            kind: 'user',
            userId,
            username: user.username,
            sessionId,
            permissions: user.permissions,
            flagPrefixes: user.flagPrefixes ?? [],
          }),
        }
        principals.set(session, known)
      }
      return known.principal
    },

    async logout(caller) {
      const p = caller.principal
      requireSession(p, 'logging out')
      await store.transact(commitMeta(caller), (tx) => tx.delete('sessions', p.sessionId))
      return p.sessionId
    },

    unlock: (username) => throttle.clear(username),
    refreshCredentials: () => store.refresh(),

    async pruneExpired() {
      const at = now().getTime()
      const expired = [...store.committed().sessions.values()].filter((s) => isExpired(s, at))
      if (expired.length === 0 || !store.writable) return 0
      const out = await store.transact(commitMeta({ principal: systemPrincipal('maintenance'), requestId: newId('prune') }), (tx) => {
        for (const s of expired) tx.delete('sessions', s.id)
      })
      return out.changes.length
    },
  }
}
