/**
 * What an administrator does from a shell (`flagd user …`, `flagd export`, `flagd import`), as one
 * interface with two carriers: in-process over the services when the CLI holds the data directory,
 * or through the daemon's control socket when a daemon holds it. Either way the same service code
 * runs, with full rights (file-system access to the data directory is the authentication).
 */

import { NotFoundError } from '../domain/errors.ts'
import type { ExportDocument } from '../domain/migration-document.ts'
import type { PublicUser } from '../domain/user.ts'
import type { ImportOptions, ImportResult } from './migration-service.ts'
import type { Services } from './services.ts'

/** The administrator's operations. */
export interface AdminApi {
  addUser(input: { username: string; password: string; permissions: string[] }): Promise<PublicUser>
  listUsers(): Promise<PublicUser[]>
  setPassword(username: string, password: string): Promise<PublicUser>
  deleteUser(username: string): Promise<PublicUser>
  exportDocument(): Promise<{ document: ExportDocument; fileName: string }>
  importDocument(raw: unknown, options: ImportOptions): Promise<ImportResult>
}

/** The operation names, as the control socket routes them. */
export const ADMIN_METHODS = ['addUser', 'listUsers', 'setPassword', 'deleteUser', 'exportDocument', 'importDocument'] as const

/** The in-process implementation over the services. */
export function createAdminService(services: Services): AdminApi {
  const byName = (username: string) => {
    const user = services.users.findByUsername(username)
    if (!user) throw new NotFoundError(`no user named ${JSON.stringify(username)}`)
    return user
  }
  return {
    addUser: (input) => services.users.create(input),
    listUsers: async () => services.users.list(),
    setPassword: async (username, password) => services.users.update('admin', byName(username).id, { password }),
    async deleteUser(username) {
      const user = byName(username)
      await services.users.remove('admin', user.id)
      return user
    },
    exportDocument: async () => services.migrations.exportDocument(),
    importDocument: (raw, options) => services.migrations.importDocument(raw, options, 'cli'),
  }
}
