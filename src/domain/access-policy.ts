/**
 * The one place that decides what a principal may do (docs/api.md#permissions). Services call it for every use
 * case; route guards call the same functions early, so a request is refused before its body is read.
 * The system principal (CLI, drop folder, bootstrap) may do everything: whoever controls the data
 * directory already controls the service.
 */

import { AppError, ForbiddenError } from './errors.ts'
import { covers, grants, grantsSomewhere, type Permission } from './permission.ts'
import type { Principal, UserPrincipal } from './principal.ts'

/**
 * True when `p` holds `permission`: unscoped, or for environment `env` when one is given
 * (docs/environments.md#permissions). `flag:read` grants `flag:evaluate` too (docs/api.md#permissions).
 */
export function can(p: Principal, permission: Permission, env?: string): boolean {
  return p.kind === 'system' || grants(p.permissions, permission, env)
}

/** Throws `ForbiddenError` naming `permission` (for `env`, when given) unless `p` holds it. */
export function requirePermission(p: Principal, permission: Permission, env?: string): void {
  if (!can(p, permission, env)) throw new ForbiddenError(permission, env)
}

/** True when `p` holds `permission` in at least one environment (route guards; the service asks for which). */
export function canSomewhere(p: Principal, permission: Permission): boolean {
  return p.kind === 'system' || grantsSomewhere(p.permissions, permission)
}

/** Throws `ForbiddenError` unless `p` holds `permission` in at least one environment. */
export function requirePermissionSomewhere(p: Principal, permission: Permission): void {
  if (!canSomewhere(p, permission)) throw new ForbiddenError(permission)
}

/** True when `p` holds the held-permission `wanted` (`flag:write@staging` or unscoped); never more than it has. */
export function holds(p: Principal, wanted: string): boolean {
  return p.kind === 'system' || covers(p.permissions, wanted)
}

/**
 * Actions about one's own login session (logout): only a session may do them. An API token has no
 * session; it is ended by revoking it (docs/api.md#api-tokens), so it gets `403`.
 */
export function requireSession(p: Principal, action: string): asserts p is UserPrincipal {
  if (p.kind !== 'user') {
    throw new AppError(
      'FORBIDDEN',
      `${action} needs a session token from POST /api/login; an API token has no session (revoke it with DELETE /api/tokens/{tokenId})`,
      { reason: 'session only' },
    )
  }
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

// one shared empty scope: every read asks, and a new array each time was garbage on the hot path
const UNSCOPED: readonly string[] = Object.freeze([])

/** The flag-name prefixes `p` is confined to; empty means every flag (unconfined users and tokens, the system). */
export function flagScopeOf(p: Principal): readonly string[] {
  return p.kind === 'system' ? UNSCOPED : p.flagPrefixes
}

/**
 * True when the flag `name` exists for `p` (docs/api.md#api-tokens): a token with `flagPrefixes` sees only
 * flags under them, and every read, list and evaluation asks here, so flags outside behave exactly
 * as if they did not exist.
 */
export function canSeeFlag(p: Principal, name: string): boolean {
  const scope = flagScopeOf(p)
  return scope.length === 0 || scope.some((prefix) => inScope(prefix, name))
}

/**
 * Whether `name` is under one `flagPrefixes` entry: a group (`mobile/`) covers the names under it;
 * a name without the slash (`storefront`) covers that flag and the group of that name, never a
 * longer name that merely starts the same way (`storefrontx/leak`).
 */
export function inScope(prefix: string, name: string): boolean {
  if (prefix.endsWith('/')) return name.startsWith(prefix)
  return name === prefix || (name.startsWith(prefix) && name.charCodeAt(prefix.length) === 47)
}

/** A change to a flag outside the token's `flagPrefixes`: refused (403), whether the flag exists or not. */
export class OutOfScopeError extends AppError {
  constructor(name: string, scope: readonly string[]) {
    super('FORBIDDEN', `this caller may only change flags under ${scope.join(', ')}; ${JSON.stringify(name)} is outside`, {
      field: 'name',
      flagPrefixes: [...scope],
    })
  }
}

/** Throws `OutOfScopeError` unless `p` may change the flag `name`. */
export function requireFlagInScope(p: Principal, name: string): void {
  if (!canSeeFlag(p, name)) throw new OutOfScopeError(name, flagScopeOf(p))
}

/**
 * Work that reaches every flag at once (migrations, segments, the whole audit log) needs a principal
 * confined to no prefixes (403); `why` says what reaches beyond the token's flags, for the message.
 */
export function requireUnscoped(p: Principal, why = 'migrations act on every flag'): void {
  const scope = flagScopeOf(p)
  if (scope.length > 0) {
    throw new AppError('FORBIDDEN', `${why}; this caller is confined to ${scope.join(', ')}; use a token or a user without flagPrefixes`, {
      flagPrefixes: [...scope],
    })
  }
}

/**
 * The prefixes to list for a query `prefix` under `scope`: the query itself when unscoped, else each
 * scope prefix narrowed by the query, with prefixes inside another one dropped, sorted, so their
 * name ranges are disjoint and in name order.
 */
export function visiblePrefixes(scope: readonly string[], prefix: string): string[] {
  if (scope.length === 0) return [prefix]
  const narrowed = scope.flatMap((s) => (prefix.startsWith(s) ? [prefix] : s.startsWith(prefix) ? [s] : []))
  const unique = [...new Set(narrowed)].sort()
  return unique.filter((p, i) => !unique.slice(0, i).some((q) => p.startsWith(q)))
}
