/**
 * Who acts: a user through a session, an API token, or the system itself (the CLI, the drop folder,
 * the first-admin bootstrap). Every service call carries one, every commit records it, and the access
 * policy decides what it may do. Replaces the old `Actor` and the `'admin'` string.
 */

import type { HeldPermission } from './permission.ts'

/**
 * The parts of flagd that act on their own authority (file-system access to the data directory).
 * `maintenance` is the daemon's own housekeeping (pruning expired sessions), never audited; `sso` makes
 * and updates the users who sign in through the identity provider (docs/single-sign-on.md);
 * `anonymous` evaluates for flagd providers that send no token where that is allowed (never writes);
 * `guard` is a rollout's guard stopping it (docs/guarded-rollouts.md#when-a-guard-trips).
 */
export type SystemName = 'cli' | 'drop-folder' | 'bootstrap' | 'maintenance' | 'sso' | 'anonymous' | 'guard'

/** A user signed in with a session. */
export interface UserPrincipal {
  kind: 'user'
  userId: string
  username: string
  sessionId: string
  permissions: readonly HeldPermission[]
  /** Empty: every flag; otherwise flags outside these prefixes do not exist for this person (docs/api.md#confined-users). */
  flagPrefixes: readonly string[]
  /** The environment this request evaluates (OFREP's `?environment=`); absent: the default one. */
  environment?: string
}

/** An API token (docs/api.md#api-tokens). */
export interface TokenPrincipal {
  kind: 'token'
  tokenId: string
  name: string
  permissions: readonly HeldPermission[]
  /** Empty: every flag; otherwise flags outside these prefixes do not exist for this principal. */
  flagPrefixes: readonly string[]
  /** The environment it evaluates; absent: the default one (docs/environments.md). */
  environment?: string
}

/** The environment a principal evaluates (docs/environments.md); `undefined`: the default one. */
export const environmentOf = (p: Principal): string | undefined => (p.kind === 'system' ? undefined : p.environment)

/** flagd itself, on behalf of whoever controls its data directory. */
export interface SystemPrincipal {
  kind: 'system'
  name: SystemName
}

/** Who acts. */
export type Principal = UserPrincipal | TokenPrincipal | SystemPrincipal

/** The principal of a system part. */
export function systemPrincipal(name: SystemName): SystemPrincipal {
  return { kind: 'system', name }
}

/** A principal and the id that ties its changes together (the request id, or one per CLI command or file). */
export interface Caller {
  principal: Principal
  requestId: string
  /** `ui`: the request came from the web UI (audited as source `ui` rather than `api`). */
  via?: 'ui'
}

/** The user id behind a principal, when it is a user (logs, "is this me?" checks). */
export function userIdOf(p: Principal): string | undefined {
  return p.kind === 'user' ? p.userId : undefined
}

/** Who acted, as audit entries, token creators and change events show it (docs/api.md#audit-log). */
export interface Actor {
  type: 'user' | 'token' | 'system'
  id: string
  /** The username, the token's name, or the system part (`cli`, `drop-folder`, `bootstrap`). */
  name: string
}

/** The actor of a principal; a system part's id is its name. */
export function actorOf(p: Principal): Actor {
  if (p.kind === 'user') return { type: 'user', id: p.userId, name: p.username }
  if (p.kind === 'token') return { type: 'token', id: p.tokenId, name: p.name }
  return { type: 'system', id: p.name, name: p.name }
}
