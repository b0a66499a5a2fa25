/**
 * User use cases (contract §3–4), shared by the HTTP API and the CLI. Every rule about users lives
 * here: unique usernames ignoring case, the last `user:write` holder, no self-deletion, and which
 * sessions end when a password changes.
 */

import { can, requirePermission, type Actor } from '../domain/actor.ts'
import { ConflictError, InvalidError, NotFoundError } from '../domain/errors.ts'
import { normalizePermissions, type Permission } from '../domain/permission.ts'
import { checkPassword, checkUsername, compareUsers, toPublicUser, usernameKey, type PublicUser, type StoredUser } from '../domain/user.ts'
import type { Store } from '../storage/json-file-store.ts'
import { ownEntry, type State } from '../storage/state.ts'
import { newId } from './new-id.ts'
import type { PasswordHasher } from './password-hasher.ts'

/** Fields of a new user. */
export interface NewUser {
  username: string
  password: string
  permissions?: readonly string[] | undefined
}

/** Fields a `PUT /api/users/{id}` may change. */
export interface UserPatch {
  username?: string | undefined
  password?: string | undefined
  permissions?: readonly string[] | undefined
  currentPassword?: string | undefined
}

/** The user use cases. */
export interface UserService {
  list(): PublicUser[]
  get(id: string): PublicUser
  findByUsername(username: string): PublicUser | undefined
  count(): number
  create(input: NewUser): Promise<PublicUser>
  update(actor: Actor | 'admin', id: string, patch: UserPatch): Promise<PublicUser>
  remove(actor: Actor | 'admin', id: string): Promise<void>
}

function findByName(state: State, username: string): StoredUser | undefined {
  const key = usernameKey(username)
  return Object.values(state.users).find((u) => usernameKey(u.username) === key)
}

function holdsUserWrite(state: State, exceptId?: string): boolean {
  return Object.values(state.users).some((u) => u.id !== exceptId && u.permissions.includes('user:write'))
}

function endSessions(state: State, userId: string, keepSessionId?: string): void {
  for (const s of Object.values(state.sessions)) {
    if (s.userId === userId && s.id !== keepSessionId) delete state.sessions[s.id]
  }
}

/** Creates the user service over a store. */
export function createUserService(store: Store, hasher: PasswordHasher, now: () => Date = () => new Date()): UserService {
  const stored = (id: string): StoredUser => {
    const user = ownEntry(store.state.users, id)
    if (!user) throw new NotFoundError(`no user with id ${JSON.stringify(id)}`)
    return user
  }

  return {
    list: () => Object.values(store.state.users).sort(compareUsers).map(toPublicUser),
    get: (id) => toPublicUser(stored(id)),
    findByUsername(username) {
      const user = findByName(store.state, username)
      return user && toPublicUser(user)
    },
    count: () => Object.keys(store.state.users).length,

    async create(input) {
      checkUsername(input.username)
      checkPassword(input.password)
      const permissions = normalizePermissions(input.permissions ?? [])
      if (findByName(store.state, input.username)) throw new ConflictError(`username ${JSON.stringify(input.username)} is taken`)
      const passwordHash = await hasher.hash(input.password)
      return store.mutate((state) => {
        if (findByName(state, input.username)) throw new ConflictError(`username ${JSON.stringify(input.username)} is taken`)
        const at = now().toISOString()
        const user: StoredUser = { id: newId('usr'), username: input.username, passwordHash, permissions, createdAt: at, updatedAt: at }
        state.users[user.id] = user
        return toPublicUser(user)
      })
    },

    async update(actor, id, patch) {
      const self = actor !== 'admin' && actor.userId === id
      const admin = actor === 'admin' || can(actor, 'user:write')
      const changesOther = patch.username !== undefined || patch.permissions !== undefined
      if (!admin && (!self || changesOther)) requirePermission(actor as Actor, 'user:write')
      const current = stored(id)
      if (patch.username !== undefined) checkUsername(patch.username)
      if (patch.password !== undefined) checkPassword(patch.password)
      const permissions: Permission[] | undefined = patch.permissions && normalizePermissions(patch.permissions)
      if (self && patch.password !== undefined) {
        const ok = patch.currentPassword !== undefined && (await hasher.verify(patch.currentPassword, current.passwordHash))
        if (!ok) {
          const reason = patch.currentPassword === undefined ? 'required to change your own password' : 'does not match'
          throw new InvalidError(`currentPassword ${reason}`, 'currentPassword', reason)
        }
      }
      // Like a flag PUT, a request that changes nothing answers with the user as it is, writing nothing.
      const samePermissions = !permissions || permissions.join() === current.permissions.join()
      if ((patch.username === undefined || patch.username === current.username) && samePermissions && patch.password === undefined) {
        return toPublicUser(current)
      }
      const passwordHash = patch.password === undefined ? undefined : await hasher.hash(patch.password)
      return store.mutate((state) => {
        const user = ownEntry(state.users, id)
        if (!user) throw new NotFoundError(`no user with id ${JSON.stringify(id)}`)
        if (patch.username !== undefined) {
          const other = findByName(state, patch.username)
          if (other && other.id !== id) throw new ConflictError(`username ${JSON.stringify(patch.username)} is taken`)
        }
        if (permissions && !permissions.includes('user:write') && user.permissions.includes('user:write') && !holdsUserWrite(state, id)) {
          throw new ConflictError('this is the last user with user:write; grant it to another user first')
        }
        if (patch.username !== undefined) user.username = patch.username
        if (permissions) user.permissions = permissions
        if (passwordHash !== undefined) {
          user.passwordHash = passwordHash
          endSessions(state, id, self ? (actor as Actor).sessionId : undefined)
        }
        user.updatedAt = now().toISOString()
        return toPublicUser(user)
      })
    },

    async remove(actor, id) {
      if (actor !== 'admin') {
        requirePermission(actor, 'user:write')
        stored(id)
        if (actor.userId === id) throw new ConflictError('you cannot delete your own account')
      }
      await store.mutate((state) => {
        const user = ownEntry(state.users, id)
        if (!user) throw new NotFoundError(`no user with id ${JSON.stringify(id)}`)
        if (user.permissions.includes('user:write') && !holdsUserWrite(state, id)) {
          throw new ConflictError('this is the last user with user:write; grant it to another user first')
        }
        endSessions(state, id)
        delete state.users[id]
      })
    },
  }
}
