/**
 * What an administrator does from a shell (`flagd user …`, `flagd token …`, `flagd env …`, `flagd promote`, `flagd audit`, `flagd flags …`,
 * `flagd usage`, `flagd export`, `flagd import`), as one
 * interface with two carriers: in-process over the services when the CLI holds the data directory,
 * or through the daemon's control socket when a daemon holds it. Either way the same service code
 * runs, as the system principal `cli` (file-system access to the data directory is the
 * authentication), and the changes of one command share one request id.
 */

import type { NewToken, PublicToken } from '../domain/api-token.ts'
import { NotFoundError } from '../domain/errors.ts'
import type { ExportDocument } from '../domain/export-document.ts'
import { newId } from '../domain/new-id.ts'
import { type Caller, systemPrincipal } from '../domain/principal.ts'
import type { PublicUser } from '../domain/user.ts'
import type { AuditFilter, AuditPage } from './audit-service.ts'
import type { Backup } from './backup-service.ts'
import type { ChangeRequestView } from './change-request-deps.ts'
import type { ChangeRequestFilter } from './change-request-reads.ts'
import type { Promotion } from './environment-promotion.ts'
import type { EnvironmentResource } from './environment-service.ts'
import type { ImportOptions, ImportResult } from './migration-service.ts'
import type { Services } from './services.ts'
import type { UsageSummary } from './usage-service.ts'

/** The administrator's operations. */
export interface AdminApi {
  addUser(input: { username: string; password: string; permissions: string[] }): Promise<PublicUser>
  listUsers(): Promise<PublicUser[]>
  setPassword(username: string, password: string): Promise<PublicUser>
  deleteUser(username: string): Promise<PublicUser>
  /** Forgets the failed-login counts of a username (they live in the daemon's memory). */
  unlockUser(username: string): Promise<{ username: string }>
  /** Creates an API token; the answer holds its secret (the only time it is shown). */
  addToken(input: {
    name: string
    permissions: string[]
    expiresAt?: string
    flagPrefixes?: string[]
    environment?: string
  }): Promise<NewToken>
  listTokens(): Promise<PublicToken[]>
  /** Revokes the token with this id, or else this name. */
  revokeToken(ref: string): Promise<PublicToken>
  /** A page of the audit log, newest first (`flagd audit`). */
  listAudit(filter: AuditFilter): Promise<AuditPage>
  /** Every flag's usage over the last 30 days, with `stale` (`flagd usage`). */
  listUsage(): Promise<UsageSummary[]>
  /** `env`: whose flag states (null: the default environment). */
  exportDocument(env: string | null): Promise<{ document: ExportDocument; fileName: string }>
  /** Every flag and segment as an OpenFeature flagd document (`flagd export --format flagd`). */
  exportFlagd(env: string | null): Promise<{ text: string; fileName: string; flags: number }>
  importDocument(raw: unknown, options: ImportOptions): Promise<ImportResult>
  /** Everything stored, as a state file (`flagd backup`). */
  backupState(): Promise<Backup>
  /** The environments (`flagd env list`). */
  listEnvironments(): Promise<EnvironmentResource[]>
  /** Creates or changes an environment (`flagd env add`). */
  putEnvironment(
    name: string,
    input: { description?: string; copyFrom?: string },
  ): Promise<{ environment: EnvironmentResource; created: boolean }>
  /** Removes an environment (`flagd env remove`). */
  removeEnvironment(name: string): Promise<{ name: string }>
  /** Copies flag states from one environment to another (`flagd promote`). */
  promote(to: string, input: { from: string; flags?: string[]; prefix?: string; dryRun?: boolean }): Promise<Promotion>
  /** Change requests, newest first (`flagd change-request list`). */
  listChangeRequests(filter: ChangeRequestFilter): Promise<ChangeRequestView[]>
  /** One change request with its diff (`flagd change-request show`). */
  showChangeRequest(id: string): Promise<ChangeRequestView>
  /** Opens a change request as the system actor `cli`; the body of `POST /api/change-requests` (`flagd change-request create`). */
  createChangeRequest(input: unknown): Promise<ChangeRequestView>
  /** Approves as the system actor `cli`, never the author (`flagd change-request approve`). */
  approveChangeRequest(id: string, comment: string | null): Promise<ChangeRequestView>
  /** Applies an approved or scheduled request now (`flagd change-request apply`). */
  applyChangeRequest(id: string): Promise<ChangeRequestView>
  /** Archives a flag (`flagd flags archive`, docs/api.md#archive); answers its name and new revision. */
  archiveFlag(name: string): Promise<{ name: string; revision: number }>
  /** Restores an archived flag (`flagd flags restore`); answers its name and new revision. */
  restoreFlag(name: string): Promise<{ name: string; revision: number }>
}

/** The in-process implementation over the services. */
export function createAdminService(services: Services): AdminApi {
  const cli = systemPrincipal('cli')
  const command = (): Caller => ({ principal: cli, requestId: newId('cli') })
  const byName = (username: string) => {
    const user = services.users.findByUsername(username)
    if (!user) throw new NotFoundError(`no user named ${JSON.stringify(username)}`)
    return user
  }
  return {
    addUser: (input) => services.users.create(command(), input),
    listUsers: async () => services.users.list(cli),
    setPassword: async (username, password) => services.users.update(command(), byName(username).id, { password }),
    deleteUser: async (username) => services.users.remove(command(), byName(username).id),
    async unlockUser(username) {
      await services.auth.unlock(username)
      return { username }
    },
    addToken: (input) => services.apiTokens.create(command(), input),
    listTokens: async () => services.apiTokens.list(cli),
    async revokeToken(ref) {
      const token = services.apiTokens.find(ref)
      if (!token) throw new NotFoundError(`no token with id or name ${JSON.stringify(ref)}`)
      return services.apiTokens.revoke(command(), token.id)
    },
    listAudit: (filter) => services.audit.list(cli, filter),
    listUsage: () => services.usage.list(cli),
    exportDocument: async (env) => services.migrations.exportDocument(cli, env ?? undefined),
    backupState: () => services.backup.take(),
    async exportFlagd(env) {
      const { text, fileName, flags } = services.migrations.exportFlagd(cli, env ?? undefined)
      return { text, fileName, flags }
    },
    importDocument: (raw, options) => services.migrations.importDocument(command(), raw, options, 'cli'),
    listEnvironments: async () => services.environments.list(command()),
    putEnvironment: (name, input) => services.environments.put(command(), name, input),
    async removeEnvironment(name) {
      await services.environments.remove(command(), name)
      return { name }
    },
    promote: (to, input) => services.environments.promote(command(), to, input),
    listChangeRequests: async (filter) => services.changeRequests.list(cli, filter),
    showChangeRequest: async (id) => services.changeRequests.get(cli, id),
    createChangeRequest: (input) => services.changeRequests.create(command(), input),
    approveChangeRequest: (id, comment) => services.changeRequests.approve(command(), id, comment === null ? {} : { comment }),
    applyChangeRequest: (id) => services.changeRequests.apply(command(), id),
    async archiveFlag(name) {
      const { revision } = await services.flags.archive(command(), name)
      return { name, revision }
    },
    async restoreFlag(name) {
      const { revision } = await services.flags.restore(command(), name)
      return { name, revision }
    },
  }
}
