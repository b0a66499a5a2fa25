/**
 * The one import engine (docs/migrations.md), used by PUT and PATCH /api/migrations, the watched folder and
 * the CLI, and the export. An import parses and validates the whole document first, then plans and
 * applies it in one store transaction: the plan is made against the newest state, and when it
 * changes something the backup (the flags as they were) is taken from that same state and written
 * durably in the same commit. So an import writes exactly one backup, of exactly what it replaced,
 * whatever else is written meanwhile. Imports run one at a time.
 */

import { can, requirePermission, requireUnscoped } from '../domain/access-policy.ts'
import type { Clock } from '../domain/clock.ts'
import { type FieldProblem, MAX_LISTED_PROBLEMS, NotFoundError, ValidationFailedError } from '../domain/errors.ts'
import { buildExportDocument, type ExportedSegment, exportFileName, exportText } from '../domain/export-document.ts'
import { type Flag, isArchived } from '../domain/flag.ts'
import { rememberingRuleChecks } from '../domain/flag-targeting-fields.ts'
import { ownExportFlags, ownExportSegments } from '../domain/flagd-round-trip.ts'
import { parseForeignDocument } from '../domain/foreign/foreign-document.ts'
import { foreignFlagName } from '../domain/foreign/foreign-flag-name.ts'
import { recogniseForeignFile, takesText } from '../domain/foreign/foreign-formats.ts'
import type { ForeignFormat, ScheduledImport, SkippedFlag } from '../domain/foreign/foreign-translation.ts'
import { type DocumentSource, parseImportDocument } from '../domain/import-document.ts'
import {
  type ImportMode,
  type ImportPlan,
  type ImportValues,
  type PlannedChange,
  type PlannedSegmentChange,
  planImport,
  planSegments,
  planSummary,
} from '../domain/migration-plan.ts'
import type { Caller } from '../domain/principal.ts'
import type { Snapshot, Store } from '../storage/store.ts'
import { commitMeta } from './commit-meta.ts'
import { type ApplyError, applyRefusal } from './dry-run-tx.ts'
import { flagsInDraft } from './environment-views.ts'
import { flagLimitMessage } from './flag-service.ts'
import { applyImport } from './migration-apply.ts'
import { createMigrationExport, type MigrationExport, sortedFlags, sortedSegments } from './migration-export.ts'
import { createPatternGate, type PatternGate } from './pattern-gate.ts'
import { fetchRemoteDocument, type RemoteFetchOptions } from './remote-document.ts'
import { previewScheduled, type ScheduledImportResult, scheduleInTransaction, scheduleRefusal } from './scheduled-import.ts'
import type { ServedSnapshots } from './served-snapshot.ts'
import { type ImportSource, NO_TELEMETRY, type Telemetry } from './telemetry.ts'

/**
 * Another tool's file sent without its `format`: the one problem that says which format reads it
 * (docs/migrations.md#from-other-tools), instead of a migration file's many.
 */
function formatHint(raw: unknown): FieldProblem[] | undefined {
  const tool = recogniseForeignFile(raw)
  if (tool === undefined) return undefined
  const reason = `this is a file of ${tool}, not a migration file: import it with format=${tool} (flagd import --format ${tool})`
  return [{ field: 'format', reason }]
}

/** Import options (query parameters of PUT/PATCH, config for the watcher). */
export interface ImportOptions {
  mode: ImportMode
  values: ImportValues
  dryRun: boolean
  /** List each updated field's value before and after (for a caller who may read flags). */
  diff?: boolean
  /**
   * The environment whose state the file's per-environment fields set (docs/environments.md#migrations);
   * shared fields change every environment. Absent: the default one. Unknown: `404`.
   */
  environment?: string | undefined
  /** The file is another tool's (docs/migrations.md#from-other-tools): translated before it is imported. */
  format?: ForeignFormat | undefined
  /** The tool's environment to read where its file holds several; absent: the first in the file. */
  sourceEnvironment?: string | undefined
}

/** The migration result (docs/migrations.md). */
export interface ImportResult {
  dryRun: boolean
  mode: ImportMode
  values: ImportValues
  source: DocumentSource
  summary: { created: number; updated: number; deleted: number; unchanged: number }
  changes: ImportedChange[]
  backup: string | null
  /** What was translated or dropped (FlagFlow's fields, a value beside valueExists false). */
  warnings: FieldProblem[]
  /** Flags of another tool's file not imported, by the tool's key, and why (empty for flagd's own documents). */
  skipped: SkippedFlag[]
  /**
   * Later changes of imported flags made scheduled change requests (docs/migrations.md#changes-a-later-time-brings);
   * present only when there are any.
   */
  scheduled?: ScheduledImportResult[]
  /** Segments created, updated or deleted (docs/targeting.md#rules); present only when there are any. */
  segmentChanges?: PlannedSegmentChange[]
  /** A dry run that applying would see refused: the error it would answer (docs/migrations.md#dry-runs). */
  applyError?: ApplyError
}

/** One flag an import creates, updates or deletes, as the result lists it. */
export interface ImportedChange {
  name: string
  action: 'create' | 'update' | 'delete'
  fields: string[]
  /** For the first {@link MAX_DIFFED_UPDATES} updates: each changed field's value now and after the import. */
  diff?: Record<string, { before?: unknown; after?: unknown }>
}

/** Updates listed with their old and new values (the rest name their fields only, to bound the answer). */
export const MAX_DIFFED_UPDATES = 100

/** A result row for a planned change; `diffed` says whether its values are shown. */
function importedChange(change: PlannedChange, diffed: boolean): ImportedChange {
  const { name, action, fields } = change
  if (!diffed || action !== 'update' || !change.previous || !change.definition) return { name, action, fields }
  const before = change.previous as unknown as Record<string, unknown>
  const after = change.definition as unknown as Record<string, unknown>
  const diff: ImportedChange['diff'] = {}
  for (const field of fields) diff[field] = { before: before[field], after: after[field] }
  return { name, action, fields, diff }
}

/** The migration use cases: the exports and the imports. */
export interface MigrationService extends MigrationExport {
  /** `origin` (a file name) is named in the log line of the import. */
  importDocument(caller: Caller, raw: unknown, options: ImportOptions, source: ImportSource, origin?: string): Promise<ImportResult>
  importFromUrl(caller: Caller, url: string, options: ImportOptions): Promise<ImportResult>
}

/** What the migration service needs. */
export interface MigrationDeps {
  store: Store
  environment: string
  publicExport: boolean
  maxFlags: number
  remote: RemoteFetchOptions
  now: Clock
  telemetry?: Telemetry
  /** Turns for pattern checks, shared with flag writes (docs/api.md#flags across requests). */
  patternGate?: PatternGate
  /** What each environment serves, shared with evaluation and sync (the exports read it). */
  snapshots?: ServedSnapshots
}

function resultOf(
  plan: ImportPlan,
  options: ImportOptions,
  source: DocumentSource,
  backup: string | null,
  warnings: FieldProblem[],
  showValues: boolean,
  segmentChanges: readonly PlannedSegmentChange[],
  skipped: readonly SkippedFlag[],
  scheduled: readonly ScheduledImportResult[] = [],
): ImportResult {
  return {
    dryRun: options.dryRun,
    mode: options.mode,
    values: options.values,
    source,
    summary: planSummary(plan),
    changes: listedChanges(plan.changes, showValues),
    backup,
    warnings: warnings.slice(0, MAX_LISTED_PROBLEMS),
    skipped: skipped.slice(0, MAX_LISTED_PROBLEMS),
    ...(scheduled.length > 0 ? { scheduled: [...scheduled] } : {}),
    ...(segmentChanges.length > 0 ? { segmentChanges: [...segmentChanges] } : {}),
  }
}

/** The result's rows: the first {@link MAX_DIFFED_UPDATES} updates with their values. */
function listedChanges(changes: readonly PlannedChange[], showValues: boolean): ImportedChange[] {
  let updates = 0
  return changes.map((c) => importedChange(c, showValues && c.action === 'update' && updates++ < MAX_DIFFED_UPDATES))
}

/** Creates the migration service. */
export function createMigrationService(deps: MigrationDeps): MigrationService {
  const { store, environment } = deps
  const now = deps.now
  const telemetry = deps.telemetry ?? NO_TELEMETRY
  // the turn of the next import: settled with nothing, so the last import's result (its changes)
  // is not kept until the next one (docs/performance.md#memory-that-goes-back)
  let queue: Promise<void> = Promise.resolve()
  const settled = () => {}
  const oneAtATime = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work)
    queue = run.then(settled, settled)
    return run
  }

  const reported = async (source: ImportSource, work: () => Promise<ImportResult>, origin?: string): Promise<ImportResult> => {
    const from = origin === undefined ? {} : { origin }
    try {
      const result = await work()
      const outcome = result.dryRun ? 'dry_run' : result.changes.length === 0 ? 'unchanged' : 'applied'
      telemetry.importFinished({ source, outcome, summary: result.summary, backup: result.backup, ...from })
      return result
    } catch (err) {
      const invalid = err instanceof ValidationFailedError
      telemetry.importFinished({ source, outcome: invalid ? 'invalid' : 'failed', error: (err as Error).message, ...from })
      throw err
    }
  }

  /** The environment an import writes (the default one when it names none); `404` when unknown. */
  const targetOf = (current: Snapshot, options: ImportOptions): string => {
    const env = options.environment
    if (env === undefined) return environment
    if (!current.environments.has(env)) throw new NotFoundError(`no environment named ${JSON.stringify(env)}`)
    return env
  }

  /** The commit meta of an import: its environment (the store decides whether it may change a protected one). */
  const importMeta = (caller: Caller, source: ImportSource, options: ImportOptions) =>
    commitMeta(caller, source, options.environment ?? environment)

  // parsing and planning check patterns (each bounded): they take turns with flag writes' checks
  const gate = deps.patternGate ?? createPatternGate()
  const gated = async <T>(work: () => T): Promise<T> => {
    const release = await gate.enter()
    try {
      return work()
    } finally {
      release()
    }
  }

  /** A migration file or flagd document as it is; another tool's file translated first (docs/migrations.md#from-other-tools). */
  const parseAnyDocument = (caller: Caller, raw: unknown, options: ImportOptions, knownSegments: ReadonlyMap<string, unknown>) => {
    if (options.format === undefined) {
      const parsed = parseImportDocument(raw, { knownSegments })
      if (!parsed.ok) throw new ValidationFailedError(formatHint(raw) ?? parsed.problems)
      return { document: parsed.document, skipped: [] as SkippedFlag[], scheduled: [] as ScheduledImport[] }
    }
    const current = store.committed()
    return parseForeignDocument(options.format, raw, {
      knownSegments,
      nowMs: now().getTime(),
      sourceEnvironment: options.sourceEnvironment,
      refuseScheduled: scheduleRefusal(current, caller.principal, targetOf(current, options)),
    })
  }

  const plan = (
    current: Snapshot,
    incoming: Parameters<typeof planImport>[1],
    options: ImportOptions,
    flagd: boolean,
    skipped: ReadonlySet<string>,
  ) => {
    // flagd's format cannot hold TAG flags, nor say a flag is archived: a flagd document never
    // deletes them (docs/migrations.md#flagd-round-trip, docs/api.md#archive); a flag another
    // tool's file holds but that was skipped is left as it is (docs/migrations.md#from-other-tools)
    const holds = flagd ? (f: Flag) => f.type !== 'TAG' && !isArchived(f) : skipped.size > 0 ? (f: Flag) => !skipped.has(f.name) : undefined
    const planned = planImport(flagsInDraft(current, targetOf(current, options)), incoming, options.mode, options.values, holds, flagd)
    if (planned.problems.length > 0) throw new ValidationFailedError(planned.problems)
    const { created, deleted } = planSummary(planned)
    const after = current.flags.size + created - deleted
    if (after > deps.maxFlags) {
      throw new ValidationFailedError([
        { field: 'flags', reason: `the import would leave ${after} flags: ${flagLimitMessage(deps.maxFlags)}` },
      ])
    }
    return planned
  }

  const applyDocument = async (caller: Caller, raw: unknown, options: ImportOptions, source: ImportSource): Promise<ImportResult> => {
    requirePermission(caller.principal, 'migration:write')
    requireUnscoped(caller.principal)
    targetOf(store.committed(), options)
    // the values now are shown only to a caller who may read them
    const showValues = options.diff === true && (can(caller.principal, 'flag:read') || can(caller.principal, 'migration:read'))
    // merge keeps the segments the document does not name: its flags may refer to them (and one
    // made a moment ago on another replica counts: catch up first)
    if (options.mode === 'merge') await store.refresh()
    const knownSegments = options.mode === 'merge' ? store.committed().segmentRules() : new Map<string, unknown>()
    const parsed = await gated(() => parseAnyDocument(caller, raw, options, knownSegments))
    const { source: origin, warnings, flagdFlags } = parsed.document
    const { skipped, scheduled } = parsed
    const ruleChecks = 'ruleChecks' in parsed ? parsed.ruleChecks : undefined
    const skippedNames = new Set(skipped.flatMap((s) => foreignFlagName(s.name) ?? []))
    // a flagd export of this daemon, imported back, is read as the flags and segments it came from
    // (docs/migrations.md#flagd-round-trip): judged against the state the import is planned on
    const wanted = (snapshot: Snapshot) =>
      flagdFlags === undefined
        ? parsed.document
        : {
            flags: ownExportFlags(
              parsed.document.flags,
              flagdFlags,
              flagsInDraft(snapshot, targetOf(snapshot, options)),
              snapshot.segmentRules(),
            ),
            segments: ownExportSegments(parsed.document.segments, snapshot.segments, snapshot.segmentRules()),
          }
    const segmentPlan = (snapshot: Snapshot, segments: ReadonlyMap<string, ExportedSegment>) =>
      planSegments(snapshot.segments, segments, options.mode)
    if (options.dryRun) {
      const current = store.committed()
      const { flags: incoming, segments } = wanted(current)
      const planned = await gated(() => plan(current, incoming, options, flagdFlags !== undefined, skippedNames))
      const segmentChanges = segmentPlan(current, segments)
      const preview = previewScheduled(current, caller.principal, targetOf(current, options), scheduled)
      const result = resultOf(planned, options, origin, null, warnings, showValues, segmentChanges, skipped, preview)
      if (planned.changes.length === 0 && segmentChanges.length === 0) return result
      // the import done over a scratch copy and put to the commit's check: would it be refused?
      const target = targetOf(current, options)
      const refusal = applyRefusal(importMeta(caller, source, options), current, (tx) =>
        applyImport(
          tx,
          planned,
          segmentChanges,
          segments,
          now().toISOString(),
          target,
          options.environment !== undefined,
          caller.principal,
        ),
      )
      return refusal ? { ...result, applyError: refusal } : result
    }
    return oneAtATime(async () => {
      // the transaction's work (which plans) runs when transact is called, inside the turn; the
      // turn ends once it is called (the durable write is awaited outside it)
      const out = await gated(() =>
        store.transact(importMeta(caller, source, options), (tx) => {
          const { flags: incoming, segments } = wanted(tx.read)
          const planned = plan(tx.read, incoming, options, flagdFlags !== undefined, skippedNames)
          const segmentChanges = segmentPlan(tx.read, segments)
          const at = now()
          const target = targetOf(tx.read, options)
          if (planned.changes.length > 0 || segmentChanges.length > 0) {
            // the backup is the environment imported into, as its export would be
            const before = sortedFlags(tx.read, target)
            tx.backup(exportFileName(target, at), exportText(buildExportDocument(before, target, at, sortedSegments(tx.read))))
            // the environment named, the default one too: a flag the file creates gets its state there only
            applyImport(
              tx,
              planned,
              segmentChanges,
              segments,
              at.toISOString(),
              target,
              options.environment !== undefined,
              caller.principal,
            )
          }
          // in the same commit: the later changes as scheduled change requests, made on the flags as imported
          // each step is validated on the flag as imported: its rules, found valid by the translation, are not compiled again
          const made = rememberingRuleChecks(
            () => scheduleInTransaction(tx, caller.principal, target, scheduled, at.toISOString()),
            ruleChecks,
          )
          return { planned, segmentChanges, made }
        }),
      )
      const { planned, segmentChanges, made } = out.result
      return resultOf(planned, options, origin, out.backups[0] ?? null, warnings, showValues, segmentChanges, skipped, made)
    })
  }

  return {
    ...createMigrationExport(deps),
    importDocument: (caller, raw, options, source, origin) => reported(source, () => applyDocument(caller, raw, options, source), origin),
    importFromUrl(caller, url, options) {
      return reported(
        'import-url',
        async () => {
          requirePermission(caller.principal, 'migration:write')
          requireUnscoped(caller.principal)
          const text = options.format !== undefined && takesText(options.format)
          return applyDocument(caller, await fetchRemoteDocument(url, deps.remote, text), options, 'import-url')
        },
        url,
      )
    },
  }
}
