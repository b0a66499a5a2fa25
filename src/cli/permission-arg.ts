/** The `--permissions` option of `flagd user add` and `flagd token add`. */

import { ENVIRONMENT_PERMISSIONS, PERMISSIONS, splitPermission } from '../domain/permission.ts'
import { UsageError } from './usage-error.ts'

/** What `--permissions` takes, for help texts. */
export const PERMISSIONS_HELP = `"all", "none", or a comma list of: ${PERMISSIONS.join(', ')}; ${ENVIRONMENT_PERMISSIONS.join(', ')} also as name@environment`

/**
 * `--permissions`: "all", "none" or a comma list; an unknown name is a usage mistake (exit 2). The
 * environment of `flag:write@staging` is checked by the service, which knows the environments.
 */
export function parsePermissions(value: string): string[] {
  if (value === 'all') return [...PERMISSIONS]
  if (value === '' || value === 'none') return []
  const names = value.split(',').map((p) => p.trim())
  const unknown = names.find((p) => !(PERMISSIONS as readonly string[]).includes(splitPermission(p)[0]))
  if (unknown !== undefined)
    throw new UsageError(`unknown permission ${JSON.stringify(unknown)} in --permissions; known: ${PERMISSIONS.join(', ')}`)
  return names
}
