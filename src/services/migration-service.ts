/**
 * The one import engine (contract §6), used by PUT and PATCH /api/migrations, the watched folder and
 * the CLI, and the export. An import parses and validates the whole document first, plans the change
 * set, saves a backup export when something will change, and applies everything in one durable
 * commit. Imports run one at a time.
 */

import { ValidationFailedError } from '../domain/errors.ts'
import { applyPlan, planImport, type ImportMode, type ImportPlan, type ImportValues } from '../domain/migration-plan.ts'
import { buildExportDocument, exportFileName, exportText, parseImportDocument, type DocumentSource, type ExportDocument } from '../domain/migration-document.ts'
import type { Flag } from '../domain/flag.ts'
import { writeBackup } from '../storage/backup-store.ts'
import type { Store } from '../storage/json-file-store.ts'
import type { FlagService } from './flag-service.ts'
import { fetchRemoteDocument, type RemoteFetchOptions } from './remote-document.ts'
import { NO_TELEMETRY, type ImportSource, type Telemetry } from './telemetry.ts'

/** Import options (query parameters of PUT/PATCH, config for the watcher). */
export interface ImportOptions {
  mode: ImportMode
  values: ImportValues
  dryRun: boolean
}

/** The migration result (contract §6.2). */
export interface ImportResult {
  dryRun: boolean
  mode: ImportMode
  values: ImportValues
  source: DocumentSource
  summary: { created: number; updated: number; deleted: number; unchanged: number }
  changes: { name: string; action: 'create' | 'update' | 'delete'; fields: string[] }[]
  backup: string | null
}

/** The migration use cases. */
export interface MigrationService {
  exportDocument(): { document: ExportDocument; fileName: string }
  importDocument(raw: unknown, options: ImportOptions, source?: ImportSource): Promise<ImportResult>
  importFromUrl(url: string, options: ImportOptions): Promise<ImportResult>
}

/** What the migration service needs. */
export interface MigrationDeps {
  store: Store
  flags: FlagService
  dataDir: string
  environment: string
  remote: RemoteFetchOptions
  now?: () => Date
  telemetry?: Telemetry
}

function resultOf(plan: ImportPlan, options: ImportOptions, source: DocumentSource, backup: string | null): ImportResult {
  const count = (action: string) => plan.changes.filter((c) => c.action === action).length
  return {
    dryRun: options.dryRun,
    mode: options.mode,
    values: options.values,
    source,
    summary: { created: count('create'), updated: count('update'), deleted: count('delete'), unchanged: plan.unchanged },
    changes: plan.changes.map(({ name, action, fields }) => ({ name, action, fields })),
    backup,
  }
}

/** Creates the migration service. */
export function createMigrationService(deps: MigrationDeps): MigrationService {
  const { store, flags, dataDir, environment } = deps
  const now = deps.now ?? (() => new Date())
  let queue: Promise<unknown> = Promise.resolve()
  const oneAtATime = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work)
    queue = run.catch(() => {})
    return run
  }
  const exportNow = (list: readonly Flag[]) => {
    const at = now()
    return { document: buildExportDocument(list, environment, at), fileName: exportFileName(environment, at) }
  }

  const telemetry = deps.telemetry ?? NO_TELEMETRY
  const reported = async (origin: ImportSource, work: () => Promise<ImportResult>): Promise<ImportResult> => {
    try {
      const result = await work()
      const outcome = result.dryRun ? 'dry_run' : result.changes.length === 0 ? 'unchanged' : 'applied'
      telemetry.importFinished({ source: origin, outcome, summary: result.summary, backup: result.backup })
      return result
    } catch (err) {
      const invalid = err instanceof ValidationFailedError
      telemetry.importFinished({ source: origin, outcome: invalid ? 'invalid' : 'failed', error: (err as Error).message })
      throw err
    }
  }

  const importDocument = (raw: unknown, options: ImportOptions, origin: ImportSource = 'api'): Promise<ImportResult> =>
    reported(origin, () => applyDocument(raw, options))

  const applyDocument = (raw: unknown, options: ImportOptions): Promise<ImportResult> => {
    const parsed = parseImportDocument(raw)
    if (!parsed.ok) return Promise.reject(new ValidationFailedError(parsed.problems))
    const { source, flags: incoming } = parsed.document
    return oneAtATime(async () => {
      for (;;) {
        const version = store.version
        const plan = planImport(store.state.flags, incoming, options.mode, options.values)
        if (plan.problems.length > 0) throw new ValidationFailedError(plan.problems)
        if (options.dryRun || plan.changes.length === 0) return resultOf(plan, options, source, null)
        const { document, fileName } = exportNow(flags.read.list(''))
        const backup = await writeBackup(dataDir, fileName, exportText(document))
        if (store.version !== version) continue // flags changed while the backup was written: plan again
        await store.mutate((state) => applyPlan(state.flags, plan, now().toISOString()))
        return resultOf(plan, options, source, backup)
      }
    })
  }

  return {
    exportDocument: () => exportNow(flags.read.list('')),
    importDocument,
    importFromUrl: (url, options) => reported('url', async () => applyDocument(await fetchRemoteDocument(url, deps.remote), options)),
  }
}
