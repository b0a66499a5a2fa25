/**
 * Permissions in one environment (docs/environments.md#permissions): `flag:write@staging` lets its
 * holder change staging's state of flags and nothing else; unscoped `flag:write` covers every
 * environment and the shared fields. The services name the environment a request acts in (the
 * default one when it names none) and ask here; an unscoped holder is answered without looking
 * the environment up, so the hot path pays nothing for the feature.
 */

import { can, requirePermission } from '../domain/access-policy.ts'
import { type Permission, splitPermission } from '../domain/permission.ts'
import type { Principal } from '../domain/principal.ts'

/** True when `p` holds `permission` in environment `env`. */
export function canIn(p: Principal, permission: Permission, env: string): boolean {
  return can(p, permission) || can(p, permission, env)
}

/** Throws `ForbiddenError` naming the permission and the environment unless `canIn`. */
export function requireIn(p: Principal, permission: Permission, env: string): void {
  if (!can(p, permission)) requirePermission(p, permission, env)
}

/**
 * The environments `p` may read, or `undefined` for every one: what an audit list, a flag's
 * per-environment states or a compare may show of a caller confined to some environments.
 */
export function readableEnvironments(p: Principal): ReadonlySet<string> | undefined {
  if (can(p, 'flag:read')) return undefined
  if (p.kind === 'system') return undefined
  const out = new Set<string>()
  for (const held of p.permissions) {
    const [permission, env] = splitPermission(held)
    if (permission === 'flag:read' && env !== undefined) out.add(env)
  }
  return out
}
