/**
 * The closed set of permission names (docs/api.md#permissions), their per-environment form
 * (`flag:write@staging`, docs/environments.md#permissions), and checks on lists of them.
 */

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
  'flag:approve',
  'flag:bypass',
] as const

/** One permission name. */
export type Permission = (typeof PERMISSIONS)[number]

/** The permissions that may name one environment; the others cover every environment by nature. */
export const ENVIRONMENT_PERMISSIONS = [
  'flag:read',
  'flag:write',
  'flag:evaluate',
  'flag:approve',
  'flag:bypass',
] as const satisfies readonly Permission[]

/** A permission that may name an environment. */
export type EnvironmentPermission = (typeof ENVIRONMENT_PERMISSIONS)[number]

/** A permission as users and tokens hold it: unscoped (every environment) or for one environment. */
export type HeldPermission = Permission | `${EnvironmentPermission}@${string}`

const KNOWN = new Set<string>(PERMISSIONS)
const SCOPABLE = new Set<string>(ENVIRONMENT_PERMISSIONS)

/** `[permission, environment]` of a held permission; the environment is undefined when unscoped. */
export function splitPermission(held: string): [string, string | undefined] {
  const at = held.indexOf('@')
  return at < 0 ? [held, undefined] : [held.slice(0, at), held.slice(at + 1)]
}

/**
 * Whether a holder of `held` has `permission`, in environment `env` when given (unscoped, or the
 * `@env` form); without `env`, only the unscoped form counts. The one place of the rule that
 * `flag:read` grants `flag:evaluate` too (docs/api.md#permissions): the access policy and the web UI
 * both ask here.
 */
export function grants(held: readonly string[], permission: Permission, env?: string): boolean {
  if (held.includes(permission)) return true
  if (permission === 'flag:evaluate' && held.includes('flag:read')) return true
  if (env === undefined || !SCOPABLE.has(permission)) return false
  return held.includes(`${permission}@${env}`) || (permission === 'flag:evaluate' && held.includes(`flag:read@${env}`))
}

/** Whether `held` has `permission` in at least one environment (route guards: the service decides which). */
export function grantsSomewhere(held: readonly string[], permission: Permission): boolean {
  if (grants(held, permission)) return true
  if (!SCOPABLE.has(permission)) return false
  return held.some((h) => h.startsWith(`${permission}@`) || (permission === 'flag:evaluate' && h.startsWith('flag:read@')))
}

/** Whether `held` covers `wanted` (a token or user made by a principal may hold no more than it). */
export function covers(held: readonly string[], wanted: string): boolean {
  const [permission, env] = splitPermission(wanted)
  return grants(held, permission as Permission, env)
}

/** Every unscoped permission `held` gives, the granted ones included, in documentation order. */
export function effectivePermissions(held: readonly string[]): Permission[] {
  return PERMISSIONS.filter((p) => grants(held, p))
}

/**
 * Checks a requested permission list and returns it de-duplicated in canonical order (unscoped ones
 * in documentation order, then per-environment ones by permission and environment), so stored lists
 * compare equal whatever order a client sent. Unknown names, a per-environment form of a permission
 * that has none, and an environment `environmentExists` denies are refused, never dropped.
 */
export function normalizePermissions(
  input: readonly string[],
  field = 'permissions',
  environmentExists: (name: string) => boolean = () => false,
): HeldPermission[] {
  for (const wanted of input) {
    const [permission, env] = splitPermission(wanted)
    if (!KNOWN.has(permission)) {
      throw new InvalidError(
        `unknown permission ${JSON.stringify(wanted)}; known: ${PERMISSIONS.join(', ')}, and ${ENVIRONMENT_PERMISSIONS.join(', ')} for one environment as name@environment`,
        field,
        `unknown permission ${JSON.stringify(wanted)}`,
      )
    }
    if (env === undefined) continue
    if (!SCOPABLE.has(permission))
      throw new InvalidError(
        `${permission} covers every environment and takes no @environment; only ${ENVIRONMENT_PERMISSIONS.join(', ')} do`,
        field,
        `${JSON.stringify(wanted)}: ${permission} takes no environment`,
      )
    if (!environmentExists(env))
      throw new InvalidError(
        `${JSON.stringify(wanted)} names no environment (${JSON.stringify(env)} does not exist)`,
        field,
        'unknown environment',
      )
  }
  const wanted = new Set(input)
  const scoped = [...wanted]
    .filter((p) => p.includes('@'))
    .sort((a, b) => {
      const [pa, ea] = splitPermission(a)
      const [pb, eb] = splitPermission(b)
      const byName = PERMISSIONS.indexOf(pa as Permission) - PERMISSIONS.indexOf(pb as Permission)
      return byName !== 0 ? byName : (ea as string) < (eb as string) ? -1 : 1
    }) as HeldPermission[]
  return [...PERMISSIONS.filter((p) => wanted.has(p)), ...scoped]
}

/** The permissions of `held` that name environment `env` (removing it drops them). */
export function namingEnvironment(held: readonly string[], env: string): string[] {
  return held.filter((h) => splitPermission(h)[1] === env)
}
