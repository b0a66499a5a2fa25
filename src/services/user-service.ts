/**
 * User use cases (docs/api.md#permissions–4), shared by the HTTP API and the CLI. Every rule about users lives
 * here: unique usernames ignoring case, the last `user:write` holder, no self-deletion, and which
 * sessions end when a password changes. Each change is one store transaction that re-checks the
 * rules against the newest state.
 */

import { authorizeUserUpdate, flagScopeOf, holds, isSelf, requirePermission } from '../domain/access-policy.ts'
import { normalizeFlagPrefixes } from '../domain/api-token.ts'
import type { Clock } from '../domain/clock.ts'
import { AppError, ConflictError, InvalidError, NotFoundError } from '../domain/errors.ts'
import { newId } from '../domain/new-id.ts'
import { type HeldPermission, normalizePermissions } from '../domain/permission.ts'
import type { Caller, Principal } from '../domain/principal.ts'
import { checkPassword, checkUsername, compareUsers, type PublicUser, type StoredUser, toPublicUser, usernameKey } from '../domain/user.ts'
import type { Snapshot, Store, Tx } from '../storage/store.ts'
import { commitMeta } from './commit-meta.ts'
import type { PasswordHasher } from './password-hasher.ts'

/** Fields of a new user. */
export interface NewUser {
  username: string
  password: string
  permissions?: readonly string[] | undefined
  /** Confines the person to these flag-name prefixes (docs/api.md#confined-users); absent or `[]`: every flag. */
  flagPrefixes?: unknown
}

/** Fields a `PUT /api/users/{id}` may change. */
export interface UserPatch {
  username?: string | undefined
  password?: string | undefined
  permissions?: readonly string[] | undefined
  flagPrefixes?: unknown
  currentPassword?: string | undefined
}

/** The user use cases. */
export interface UserService {
  list(principal: Principal): PublicUser[]
  get(principal: Principal, id: string): PublicUser
  /** The caller's own user (no permission needed). */
  me(principal: Principal): PublicUser
  findByUsername(username: string): PublicUser | undefined
  count(): number
  create(caller: Caller, input: NewUser): Promise<PublicUser>
  update(caller: Caller, id: string, patch: UserPatch): Promise<PublicUser>
  remove(caller: Caller, id: string): Promise<PublicUser>
}

/** The user with this username (ignoring case), if any. */
export function findUserByName(snapshot: Snapshot, username: string): StoredUser | undefined {
  const key = usernameKey(username)
  for (const u of snapshot.users.values()) if (usernameKey(u.username) === key) return u
  return undefined
}

function holdsUserWrite(snapshot: Snapshot, exceptId: string): boolean {
  for (const u of snapshot.users.values()) if (u.id !== exceptId && u.permissions.includes('user:write')) return true
  return false
}

/** Deletes the sessions of `userId` (but `keepSessionId`) inside a transaction. */
export function endSessions(tx: Tx, userId: string, keepSessionId?: string): void {
  for (const s of [...tx.read.sessions.values()]) if (s.userId === userId && s.id !== keepSessionId) tx.delete('sessions', s.id)
}

function stored(snapshot: Snapshot, id: string): StoredUser {
  const user = snapshot.users.get(id)
  if (!user) throw new NotFoundError(`no user with id ${JSON.stringify(id)}`)
  return user
}

const LAST_ADMIN = 'this is the last user with user:write; grant it to another user first'

/**
 * A token acting on a person (docs/api.md#api-tokens): the person it creates or changes may hold only
 * permissions the token holds, and, since a person is never confined to flag prefixes nor expires,
 * a token that is confined or expires may not create or change one at all. Without this a leaked
 * `user:write` token could make an account stronger than itself.
 */
function checkNoStrongerThanToken(
  p: Principal,
  permissions: readonly HeldPermission[],
  act: 'create' | 'change',
  options: { tokenExpiresAt?: string | null | undefined } = {},
): void {
  const whom = act === 'create' ? 'create a user' : 'change this user'
  // a confined caller (token or person) manages no one: it could make an account wider than itself
  if (flagScopeOf(p).length > 0)
    throw new AppError('FORBIDDEN', `a caller confined to flag prefixes cannot ${whom} (ask someone who is not confined)`)
  if (p.kind !== 'token') return
  if (options.tokenExpiresAt) throw new AppError('FORBIDDEN', `a token that expires cannot ${whom}: a user never expires`)
  const missing = permissions.find((x) => !holds(p, x))
  if (missing !== undefined) {
    throw new AppError('FORBIDDEN', `this token cannot ${whom} with ${missing}, which the token itself does not hold`, {
      required: missing,
    })
  }
}

/** Creates the user service over a store. */
export function createUserService(
  store: Store,
  hasher: PasswordHasher,
  now: Clock,
  /** Called when a password is set: the old failed-login counts no longer mean anything. */
  onPasswordSet: (username: string) => void = () => {},
): UserService {
  const taken = (username: string) => new ConflictError(`username ${JSON.stringify(username)} is taken`)
  const tokenExpiry = (p: Principal) => (p.kind === 'token' ? store.committed().tokens.get(p.tokenId)?.expiresAt : undefined)
  return {
    list(principal) {
      requirePermission(principal, 'user:read')
      return [...store.committed().users.values()].sort(compareUsers).map(toPublicUser)
    },
    get(principal, id) {
      requirePermission(principal, 'user:read')
      return toPublicUser(stored(store.committed(), id))
    },
    me(principal) {
      if (principal.kind !== 'user') throw new NotFoundError('only a signed-in user has a user record')
      return toPublicUser(stored(store.committed(), principal.userId))
    },
    findByUsername(username) {
      const user = findUserByName(store.committed(), username)
      return user && toPublicUser(user)
    },
    count: () => store.committed().users.size,

    async create(caller, input) {
      requirePermission(caller.principal, 'user:write')
      checkUsername(input.username)
      checkPassword(input.password)
      const permissions = normalizePermissions(input.permissions ?? [], 'permissions', (e) => store.committed().environments.has(e))
      const flagPrefixes = normalizeFlagPrefixes(input.flagPrefixes)
      checkNoStrongerThanToken(caller.principal, permissions, 'create', { tokenExpiresAt: tokenExpiry(caller.principal) })
      if (findUserByName(store.committed(), input.username)) throw taken(input.username)
      const passwordHash = await hasher.hash(input.password)
      const out = await store.transact(commitMeta(caller), (tx) => {
        if (findUserByName(tx.read, input.username)) throw taken(input.username)
        const at = now().toISOString()
        const user: StoredUser = {
          id: newId('usr'),
          username: input.username,
          passwordHash,
          permissions,
          ...(flagPrefixes.length > 0 ? { flagPrefixes } : {}),
          createdAt: at,
          updatedAt: at,
        }
        tx.put('users', user)
        return toPublicUser(user)
      })
      return out.result
    },

    async update(caller, id, patch) {
      const p = caller.principal
      authorizeUserUpdate(p, id, {
        username: patch.username !== undefined,
        permissions: patch.permissions !== undefined || patch.flagPrefixes !== undefined,
      })
      const flagPrefixes = patch.flagPrefixes === undefined ? undefined : normalizeFlagPrefixes(patch.flagPrefixes)
      const current = stored(store.committed(), id)
      if (patch.username !== undefined) checkUsername(patch.username)
      if (patch.password !== undefined) checkPassword(patch.password)
      const permissions: HeldPermission[] | undefined =
        patch.permissions && normalizePermissions(patch.permissions, 'permissions', (e) => store.committed().environments.has(e))
      // a token may change a user only within what it holds itself: never grant more, never take over a stronger account
      if (!isSelf(p, id) || permissions !== undefined || flagPrefixes !== undefined) {
        if (flagScopeOf(p).length > 0) checkNoStrongerThanToken(p, current.permissions, 'change')
      }
      if (p.kind === 'token') {
        checkNoStrongerThanToken(p, current.permissions, 'change', { tokenExpiresAt: tokenExpiry(p) })
        if (permissions) checkNoStrongerThanToken(p, permissions, 'change', { tokenExpiresAt: tokenExpiry(p) })
      }
      const self = isSelf(p, id)
      if (self && patch.password !== undefined) {
        const ok = patch.currentPassword !== undefined && (await hasher.verify(patch.currentPassword, current.passwordHash))
        if (!ok) {
          const reason = patch.currentPassword === undefined ? 'required to change your own password' : 'does not match'
          throw new InvalidError(`currentPassword ${reason}`, 'currentPassword', reason)
        }
      }
      // Like a flag PUT, a request that changes nothing answers with the user as it is, writing nothing.
      const samePermissions = !permissions || permissions.join() === current.permissions.join()
      const samePrefixes = !flagPrefixes || flagPrefixes.join('\n') === (current.flagPrefixes ?? []).join('\n')
      if (
        (patch.username === undefined || patch.username === current.username) &&
        samePermissions &&
        samePrefixes &&
        patch.password === undefined
      ) {
        return toPublicUser(current)
      }
      const passwordHash = patch.password === undefined ? undefined : await hasher.hash(patch.password)
      const out = await store.transact(commitMeta(caller), (tx) => {
        const user = stored(tx.read, id)
        if (patch.username !== undefined) {
          const other = findUserByName(tx.read, patch.username)
          if (other && other.id !== id) throw taken(patch.username)
        }
        if (permissions && !permissions.includes('user:write') && user.permissions.includes('user:write') && !holdsUserWrite(tx.read, id)) {
          throw new ConflictError(LAST_ADMIN)
        }
        const { flagPrefixes: _was, ...rest } = user
        const prefixes = flagPrefixes ?? user.flagPrefixes ?? []
        const next: StoredUser = {
          ...rest,
          username: patch.username ?? user.username,
          permissions: permissions ?? user.permissions,
          ...(prefixes.length > 0 ? { flagPrefixes: prefixes } : {}),
          passwordHash: passwordHash ?? user.passwordHash,
          updatedAt: now().toISOString(),
        }
        tx.put('users', next)
        if (passwordHash !== undefined) endSessions(tx, id, self && p.kind === 'user' ? p.sessionId : undefined)
        return toPublicUser(next)
      })
      if (passwordHash !== undefined) onPasswordSet(out.result.username)
      return out.result
    },

    async remove(caller, id) {
      requirePermission(caller.principal, 'user:write')
      stored(store.committed(), id)
      if (isSelf(caller.principal, id)) throw new ConflictError('you cannot delete your own account')
      const out = await store.transact(commitMeta(caller), (tx) => {
        const user = stored(tx.read, id)
        if (user.permissions.includes('user:write') && !holdsUserWrite(tx.read, id)) throw new ConflictError(LAST_ADMIN)
        endSessions(tx, id)
        tx.delete('users', id)
        return toPublicUser(user)
      })
      return out.result
    },
  }
}
