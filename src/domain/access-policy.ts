/**
 * The one place that decides what a principal may do (contract §3). Services call it for every use
 * case; route guards call the same functions early, so a request is refused before its body is read.
 * The system principal (CLI, drop folder, bootstrap) may do everything: whoever controls the data
 * directory already controls the service.
 */

import { ForbiddenError } from './errors.ts'
import type { Permission } from './permission.ts'
import type { Principal } from './principal.ts'

/** True when `p` holds `permission`. */
export function can(p: Principal, permission: Permission): boolean {
  return p.kind === 'system' || p.permissions.includes(permission)
}

/** Throws `ForbiddenError` naming `permission` unless `p` holds it. */
export function requirePermission(p: Principal, permission: Permission): void {
  if (!can(p, permission)) throw new ForbiddenError(permission)
}

/** True when `p` is the user `userId` signed in with a session. */
export function isSelf(p: Principal, userId: string): boolean {
  return p.kind === 'user' && p.userId === userId
}

/**
 * Changing a user: `user:write`, except that anyone may change their own password (the service
 * then asks for the current one). Throws `ForbiddenError` otherwise.
 */
export function authorizeUserUpdate(p: Principal, userId: string, changes: { username: boolean; permissions: boolean }): void {
  if (can(p, 'user:write')) return
  if (!isSelf(p, userId) || changes.username || changes.permissions) throw new ForbiddenError('user:write')
}

/** Ending a session: one's own always, anyone else's with `session:write`. */
export function authorizeSessionDelete(p: Principal, sessionUserId: string): void {
  if (!isSelf(p, sessionUserId)) requirePermission(p, 'session:write')
}
