/**
 * The first user (docs/operations.md): when no user exists, `serve` creates one with every permission from
 * FLAGD_ADMIN_USERNAME and FLAGD_ADMIN_PASSWORD (unattended installs), or says how to create one.
 */

import { ConflictError } from '../domain/errors.ts'
import { newId } from '../domain/new-id.ts'
import { PERMISSIONS } from '../domain/permission.ts'
import { systemPrincipal } from '../domain/principal.ts'
import type { Services } from './services.ts'

/** Creates the first admin from the environment when there is no user (see module comment). */
export async function bootstrapAdmin(
  services: Services,
  dataDir: string,
  env: Record<string, string | undefined>,
  log: (line: string) => void,
  /** How to run flagd's CLI from where the daemon was started (`flagd`, `bun src/main.ts`, a path). */
  command = 'flagd',
): Promise<void> {
  if (services.users.count() > 0) return
  const username = env.FLAGD_ADMIN_USERNAME
  const password = env.FLAGD_ADMIN_PASSWORD
  if (username && password) {
    const caller = { principal: systemPrincipal('bootstrap'), requestId: newId('bootstrap') }
    try {
      await services.users.create(caller, { username, password, permissions: [...PERMISSIONS] })
    } catch (err) {
      // replicas starting together on one database: another one created it first
      if (err instanceof ConflictError && services.users.count() > 0)
        return log(`the first user "${username}" was created by another replica`)
      throw err
    }
    log(`created the first user "${username}" with every permission (from FLAGD_ADMIN_USERNAME and FLAGD_ADMIN_PASSWORD)`)
    return
  }
  if (username || password) throw new Error('set both FLAGD_ADMIN_USERNAME and FLAGD_ADMIN_PASSWORD to create the first user, or neither')
  log(
    'no users yet. Create the first admin with:\n' +
      `  ${command} user add admin --data-dir ${dataDir}   (prompts for the password)\n` +
      'or start with FLAGD_ADMIN_USERNAME and FLAGD_ADMIN_PASSWORD set.',
  )
}
