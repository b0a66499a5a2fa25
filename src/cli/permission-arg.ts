/** The `--permissions` option of `flagd user add` and `flagd token add`. */

import { PERMISSIONS } from '../domain/permission.ts'
import { UsageError } from './usage-error.ts'

/** What `--permissions` takes, for help texts. */
export const PERMISSIONS_HELP = `"all", "none", or a comma list of: ${PERMISSIONS.join(', ')}`

/** `--permissions`: "all", "none" or a comma list; an unknown name is a usage mistake (exit 2). */
export function parsePermissions(value: string): string[] {
  if (value === 'all') return [...PERMISSIONS]
  if (value === '' || value === 'none') return []
  const names = value.split(',').map((p) => p.trim())
  const unknown = names.find((p) => !(PERMISSIONS as readonly string[]).includes(p))
  if (unknown !== undefined)
    throw new UsageError(`unknown permission ${JSON.stringify(unknown)} in --permissions; known: ${PERMISSIONS.join(', ')}`)
  return names
}
