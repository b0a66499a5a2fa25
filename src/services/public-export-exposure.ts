/**
 * The public export (`GET /migration/export`, no credential) serves every flag of every environment:
 * while someone is confined to a part of the flags or to an environment, or people sign in through
 * single sign-on, it hands anyone what those rules hold back. This names that at start
 * (docs/operations.md#the-public-export), so the sysadmin turns it off or decides to keep it.
 */

import type { StoredToken } from '../domain/api-token.ts'
import type { HeldPermission } from '../domain/permission.ts'
import type { StoredUser } from '../domain/user.ts'

/** The parts of the committed state this reads. */
export interface ConfinementState {
  users: ReadonlyMap<string, Pick<StoredUser, 'permissions' | 'flagPrefixes'>>
  tokens: ReadonlyMap<string, Pick<StoredToken, 'permissions' | 'flagPrefixes' | 'environment'>>
}

const scoped = (permissions: readonly HeldPermission[]) => permissions.some((p) => p.includes('@'))
const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? '' : 's'}`

/** The warning to log at start, or `undefined` when the public export is off or undoes no confinement. */
export function publicExportExposure(
  state: ConfinementState,
  options: { publicExport: boolean; singleSignOn: boolean },
): string | undefined {
  if (!options.publicExport) return undefined
  let users = 0
  let tokens = 0
  for (const u of state.users.values()) if ((u.flagPrefixes ?? []).length > 0 || scoped(u.permissions)) users++
  for (const t of state.tokens.values())
    if (t.flagPrefixes.length > 0 || (t.environment ?? null) !== null || scoped(t.permissions)) tokens++
  const why = [
    users > 0 ? `${plural(users, 'user')} confined to flag prefixes or environments` : '',
    tokens > 0 ? `${plural(tokens, 'API token')} confined to flag prefixes or an environment` : '',
    options.singleSignOn ? 'single sign-on configured (its groups may confine people)' : '',
  ].filter(Boolean)
  if (why.length === 0) return undefined
  return `GET /migration/export is public and serves every flag of every environment to anyone, while there are ${why.join(', ')}; set publicExport: false (FLAGD_PUBLIC_EXPORT=false) unless that is intended`
}
