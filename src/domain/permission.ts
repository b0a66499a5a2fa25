/** The closed set of permission names (contract §3) and checks on lists of them. */

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
] as const

/** One permission name. */
export type Permission = (typeof PERMISSIONS)[number]

const KNOWN = new Set<string>(PERMISSIONS)

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
