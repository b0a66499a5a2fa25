/** Users as stored and as shown, and the rules for usernames and passwords (docs/api.md#authentication). */

import { compareCodePoints } from './code-point-order.ts'
import { codePointCount } from './code-points.ts'
import { InvalidError } from './errors.ts'
import type { HeldPermission } from './permission.ts'

/** A user as kept in the state file. The hash never leaves the storage and service layers. */
export interface StoredUser {
  id: string
  username: string
  passwordHash: string
  permissions: HeldPermission[]
  /** The flag-name prefixes the person is confined to (docs/api.md#confined-users); absent or empty: every flag. */
  flagPrefixes?: string[]
  /** How the person signs in; absent: `local` (a password). */
  source?: UserSource
  /** A person of the identity provider: who they are there (matched at every sign-in, never by name). */
  oidc?: { issuer: string; subject: string }
  createdAt: string
  updatedAt: string
}

/** How a user signs in: with a password here, or through the identity provider. */
export type UserSource = 'local' | 'oidc'

/** A user as every API and CLI answer shows it: no password, no hash. */
export interface PublicUser {
  id: string
  username: string
  permissions: HeldPermission[]
  flagPrefixes: string[]
  source: UserSource
  createdAt: string
  updatedAt: string
}

const USERNAME = /^[A-Za-z0-9._@-]{1,64}$/
export const USERNAME_MAX = 64
export const PASSWORD_MIN = 8
export const PASSWORD_MAX = 1024

/** Strips secrets from a stored user, building the answer from an allow-list of fields. */
export function toPublicUser(u: StoredUser): PublicUser {
  return {
    id: u.id,
    username: u.username,
    permissions: [...u.permissions],
    flagPrefixes: [...(u.flagPrefixes ?? [])],
    source: u.source ?? 'local',
    createdAt: u.createdAt,
    updatedAt: u.updatedAt,
  }
}

/** Throws unless `username` is 1–64 characters of `A–Z a–z 0–9 . _ @ -`. */
export function checkUsername(username: string, field = 'username'): void {
  if (username.length === 0) throw new InvalidError('username must not be empty', field, 'must not be empty')
  if (!USERNAME.test(username)) {
    const reason =
      codePointCount(username, USERNAME_MAX) > USERNAME_MAX
        ? `must be at most ${USERNAME_MAX} characters`
        : 'may contain only letters A-Z a-z, digits and . _ @ -'
    throw new InvalidError(`username ${reason}`, field, reason)
  }
}

/** Throws unless `password` is 8–1024 characters (Unicode code points). */
export function checkPassword(password: string, field = 'password'): void {
  const length = codePointCount(password, PASSWORD_MAX)
  if (length < PASSWORD_MIN) {
    throw new InvalidError(`${field} must be at least ${PASSWORD_MIN} characters`, field, `must be at least ${PASSWORD_MIN} characters`)
  }
  if (length > PASSWORD_MAX) {
    throw new InvalidError(`${field} must be at most ${PASSWORD_MAX} characters`, field, `must be at most ${PASSWORD_MAX} characters`)
  }
}

/** The key under which usernames are unique and sorted: lower case. */
export function usernameKey(username: string): string {
  return username.toLowerCase()
}

/** Contract order for user lists: lower-cased username by code point, ties by the exact name. */
export function compareUsers(a: { username: string }, b: { username: string }): number {
  return compareCodePoints(usernameKey(a.username), usernameKey(b.username)) || compareCodePoints(a.username, b.username)
}
