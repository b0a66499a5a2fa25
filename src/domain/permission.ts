/** The closed set of permission names (docs/api.md#permissions) and checks on lists of them. */

import { InvalidError } from './errors.ts'

/** Every permission the service knows, in documentation order. */
export const PERMISSIONS = [
  'flag:read',
  'flag:write',
  'user:read',
  'user:write',
  'session:read',
  'session:write',
  'migration:read',
  'migration:write',
  'flag:evaluate',
  'token:read',
  'token:write',
  'audit:read',
  'environment:write',
] as const

/** One permission name. */
export type Permission = (typeof PERMISSIONS)[number]

const KNOWN = new Set<string>(PERMISSIONS)

/**
 * Whether a holder of `held` has `permission`. The one place of the rule that `flag:read` grants
 * `flag:evaluate` too (docs/api.md#permissions): the access policy and the web UI both ask here.
 */
export function grants(held: readonly string[], permission: Permission): boolean {
  return held.includes(permission) || (permission === 'flag:evaluate' && held.includes('flag:read'))
}

/** Every permission `held` gives, the granted ones included, in documentation order. */
export function effectivePermissions(held: readonly string[]): Permission[] {
  return PERMISSIONS.filter((p) => grants(held, p))
}

/**
 * Checks a requested permission list and returns it de-duplicated in canonical order, so stored
 * lists compare equal whatever order a client sent. Unknown names are refused, never dropped.
 */
export function normalizePermissions(input: readonly string[], field = 'permissions'): Permission[] {
  const unknown = input.filter((p) => !KNOWN.has(p))
  if (unknown.length > 0) {
    throw new InvalidError(
      `unknown permission ${JSON.stringify(unknown[0])}; known: ${PERMISSIONS.join(', ')}`,
      field,
      `unknown permission ${JSON.stringify(unknown[0])}`,
    )
  }
  const wanted = new Set(input)
  return PERMISSIONS.filter((p) => wanted.has(p))
}
