/** Who is making a request, as the services see it: resolved fresh from the store on every call. */

import { ForbiddenError } from './errors.ts'
import type { Permission } from './permission.ts'

/** The caller: a user, the session it came through, and its current permissions. */
export interface Actor {
  userId: string
  username: string
  sessionId: string
  permissions: readonly Permission[]
}

/** True when the actor holds `permission`. */
export function can(actor: Actor, permission: Permission): boolean {
  return actor.permissions.includes(permission)
}

/** Throws `ForbiddenError` naming `permission` unless the actor holds it. */
export function requirePermission(actor: Actor, permission: Permission): void {
  if (!can(actor, permission)) throw new ForbiddenError(permission)
}
