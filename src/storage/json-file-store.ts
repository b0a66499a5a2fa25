/**
 * The store on one JSON file (`<dataDir>/flagd.json`) and its change journal (`<dataDir>/changes/`),
 * implementing the store contract (`store.ts`). Transactions apply to the draft of the open batch at
 * once; batches are group-committed: while one is being written, later transactions gather into the
 * next (`GroupCommit`), and each caller resolves only when a write that contains its change is
 * durable. A batch is durable once its line of the change journal is (`FileBatchWriter`), so a write
 * costs what it changes; the state file is rewritten in the background by checkpoints
 * (`StateCheckpoints`) and at a clean stop, so after a clean stop it holds everything
 * (docs/operations.md#durability, decision record 0009). lowdb's part is opening: `Low` over the
 * durable adapter reads the file, creates it, and upgrades an older file; the journal's lines past
 * its revision are then replayed. Only once a batch is durable does the committed snapshot move and
 * do the commit listeners hear of it. A failed write turns the store read-only (503) and fails
 * everything pending; the committed snapshot stays what is on disk.
 */

import { join } from 'node:path'
import { Low } from 'lowdb'
import type { Clock } from '../domain/clock.ts'
import { UnavailableError } from '../domain/errors.ts'
import { removeStaleTempFiles, writeFileAtomic } from '../io/atomic-write.ts'
import { AuditJournal } from './audit-journal.ts'
import { ChangeJournal, changeJournalDir, type DiskFaults, readChangeJournal } from './change-journal.ts'
import { CommitListeners } from './commit-listeners.ts'
import { prepareDataDir } from './data-dir.ts'
import { DurableTextFile } from './durable-text-file.ts'
import { fileAuditLog } from './file-audit-log.ts'
import { type BatchEntry, FileBatchWriter, type PreparedBatch } from './file-batch-writer.ts'
import { acquireDirLock, type DirLock } from './file-lock.ts'
import { type Deferred, deferred, GroupCommit, type PipelineBatch } from './group-commit.ts'
import { replayJournal } from './journal-replay.ts'
import { JsonTexts } from './json-texts.ts'
import { Draft, DraftTx, MemorySnapshot, type StateData } from './memory-state.ts'
import { type CheckpointPolicy, DEFAULT_CHECKPOINTS, StateCheckpoints } from './state-checkpoint.ts'
import { emptyStateText, newStoreId, parseStateFile, serializeState } from './state-file-format.ts'
import { SCHEMA_VERSION, stateChunks } from './state-text-builder.ts'
import type { AuditLog, Commit, CommitMeta, Rows, Snapshot, Store, Tx, TxResult, UsageTable } from './store.ts'
import { UsageTimes } from './usage-times.ts'

/** Options of `openJsonFileStore`. */
export interface FileStoreOptions {
  dataDir: string
  /** The process's clock: audit entries are stamped and pruned by it (docs/development.md#time). */
  now: Clock
  /** Called before every write to the data directory; tests throw from it to simulate a full disk. */
  faults?: DiskFaults
  /** When checkpoints run (docs/operations.md#durability); tests set it. */
  checkpoints?: Partial<CheckpointPolicy>
  /** Called after each durable write with its duration and the number of transactions it carried. */
  onWrite?: (seconds: number, transactions: number) => void
  /** Called once when a write fails and the store turns read-only. */
  onFailure?: (error: unknown) => void
  /** Told what opening did that an operator should know (an upgraded state file). */
  log?: (line: string) => void
  /** Audit entries older than this are pruned and never read (0: keep everything); default 365 days. */
  auditRetentionMs?: number
  /** The default environment (config `environment`): flags of a file from before environments get their state there. */
  environment?: string
}

/** The state file's path inside a data directory. */
export function stateFilePath(dataDir: string): string {
  return join(dataDir, 'flagd.json')
}

/** Where the original of a state file upgraded from schema `version` is kept (`flagd.v1.json`, `flagd.v2.json`). */
export function upgradeBackupPath(dataDir: string, version: number): string {
  return join(dataDir, `flagd.v${version}.json`)
}

/** Where the original of an upgraded version-1 state file is kept. */
export function v1BackupPath(dataDir: string): string {
  return upgradeBackupPath(dataDir, 1)
}

interface Entry extends BatchEntry {
  written: Deferred<string[]>
}

interface Batch extends PipelineBatch {
  draft: Draft
  /** The revision the batch starts from. */
  from: number
  entries: Entry[]
  /** Write even without entries (pending session last-use times). */
  force: boolean
}

/**
 * Opens a data directory: takes its lock (throws `DirectoryInUseError` when another process holds
 * it), removes temp files a crash left, loads the state file (a damaged one throws
 * `CorruptStateError`), upgrades an older file (keeping its original as `flagd.v<version>.json`,
 * `flagd.v5.json` for the last), or creates an empty one; then replays the change journal past the
 * state file's revision and writes again the audit entries of those changes a crash kept from the
 * audit journal.
 */
export async function openJsonFileStore(options: FileStoreOptions): Promise<Store> {
  await prepareDataDir(options.dataDir)
  const lock = acquireDirLock(options.dataDir)
  try {
    const path = stateFilePath(options.dataDir)
    await removeStaleTempFiles(path)
    const file = new DurableTextFile(path)
    const db = new Low<string>(file, '')
    await db.read()
    if (db.data === null || db.data === '') {
      db.data = emptyStateText()
      await db.write()
    }
    const loaded = parseStateFile(path, db.data, options.environment)
    if (loaded.fromVersion < SCHEMA_VERSION) {
      // the original stays beside it: the flagd that wrote it cannot read the new version
      const original = upgradeBackupPath(options.dataDir, loaded.fromVersion)
      await writeFileAtomic(original, db.data)
      db.data = serializeState(loaded.data, () => undefined)
      await db.write() // writeFileAtomic: durable, directory included
      options.log?.(`upgraded ${path} from schema version ${loaded.fromVersion} to ${SCHEMA_VERSION}; the original is kept as ${original}`)
    }
    if (loaded.data.storeId === undefined) {
      // a state file from before change journals: it gets its identity before the first line is written
      loaded.data = { ...loaded.data, storeId: newStoreId() }
      db.data = serializeState(loaded.data, () => undefined)
      await db.write()
    }
    const stateBytes = Buffer.byteLength(db.data)
    db.data = '' // the text is parsed; holding it would cost the state's size again
    const read = readChangeJournal(options.dataDir, options.log)
    const replayed = replayJournal(loaded.data, read.batches, changeJournalDir(options.dataDir))
    const journal = await AuditJournal.open(options.dataDir, replayed.data.revision, options.log)
    const repaired = await journal.repair(replayed.audit)
    if (repaired > 0) options.log?.(`audit log: wrote again ${repaired} entries of changes a crash had kept from it`)
    const changes = ChangeJournal.open(options.dataDir, read.segments, options.faults)
    return new JsonFileStore(replayed.data, lock, changes, journal, options, { behind: read.batches.length > 0, stateBytes })
  } catch (err) {
    lock.release()
    throw err
  }
}

class JsonFileStore implements Store {
  private current: StateData
  private snapshot: MemorySnapshot
  private isWritable = true
  private open: Batch | undefined
  private readonly pipeline: GroupCommit<Batch, PreparedBatch>
  private readonly listeners = new CommitListeners()
  private readonly usage = new UsageTimes()
  private readonly writer: FileBatchWriter
  private readonly checkpoints: StateCheckpoints
  private touchedSinceWrite = false
  writes = 0

  constructor(
    initial: StateData,
    private readonly lock: DirLock,
    private readonly changes: ChangeJournal,
    private readonly journal: AuditJournal,
    private readonly options: FileStoreOptions,
    opened: { behind: boolean; stateBytes: number },
  ) {
    this.current = initial
    this.snapshot = new MemorySnapshot(initial)
    this.audit = fileAuditLog(
      journal,
      () => options.auditRetentionMs ?? 365 * 86_400_000,
      () => options.now().getTime(),
    )
    const texts = new JsonTexts()
    this.writer = new FileBatchWriter(changes, journal, this.usage, options.dataDir, options.now, texts, options.faults)
    this.checkpoints = new StateCheckpoints(
      {
        path: stateFilePath(options.dataDir),
        changes,
        audit: journal,
        committed: () => this.current,
        lastUsed: (table, id) => this.usage.get(table, id),
        texts,
        ...(options.faults ? { faults: options.faults } : {}),
        failed: (err) =>
          options.log?.(
            `writing the state file failed (every change is safe in the change journal; retried later): ${(err as Error)?.message ?? err}`,
          ),
      },
      { ...DEFAULT_CHECKPOINTS, ...options.checkpoints },
      opened.behind,
      opened.stateBytes,
    )
    this.pipeline = new GroupCommit<Batch, PreparedBatch>({
      take: () => this.take(),
      prepare: (batch) => {
        this.touchedSinceWrite = false // the staged file carries every use recorded until now
        return this.writer.prepare(batch.draft, batch.from, batch.entries)
      },
      commit: async () => {}, // the journal line was the durable point
      committed: (batch, prepared) => this.publish(batch, prepared),
      undo: (prepared) => this.writer.undo(prepared),
      failed: (batches, cause) => this.fail(batches, cause),
    })
  }

  readonly audit: AuditLog

  get writable(): boolean {
    return this.isWritable
  }

  committed(): Snapshot {
    return this.snapshot
  }

  onCommit(listener: (commit: Commit) => void): () => void {
    return this.listeners.add(listener)
  }

  touch(table: UsageTable, id: string, at: string): void {
    if (this.usage.touch(table, id, at)) this.touchedSinceWrite = true
  }

  lastUsed<T extends UsageTable>(table: T, row: Rows[T]): Rows[T]['lastUsedAt'] {
    return this.usage.lastUsed(table, row)
  }

  async transact<T>(meta: CommitMeta, work: (tx: Tx) => T): Promise<TxResult<T>> {
    if (!this.isWritable) throw new UnavailableError()
    const batch = (this.open ??= this.newBatch())
    const tx = new DraftTx(batch.draft)
    let result: T
    let recorded: CommitMeta
    try {
      result = work(tx)
      recorded = tx.guarded(meta, this.options.now().toISOString())
    } catch (err) {
      tx.rollback()
      throw err
    }
    const changes = tx.finish()
    if (changes.length === 0 && tx.backups.length === 0) {
      await this.settled() // its answer may rest on changes still being written
      return { result, revision: batch.draft.revision, changes, backups: [] }
    }
    const entry: Entry = { meta: recorded, changes, backups: [...tx.backups], written: deferred() }
    batch.entries.push(entry)
    void this.pipeline.kick()
    const backups = await entry.written.promise
    return { result, revision: changes.at(-1)?.seq ?? batch.draft.revision, changes, backups }
  }

  /** Only this process writes the file: the snapshot is always current. */
  async refresh(): Promise<void> {}

  async flush(): Promise<void> {
    if (!this.isWritable) return
    if (this.touchedSinceWrite) {
      const batch = (this.open ??= this.newBatch())
      batch.force = true
      void this.pipeline.kick()
    }
    await this.settled().catch(() => {})
  }

  async backup(): Promise<{ text: string; revision: number; flags: number }> {
    await this.settled().catch(() => {})
    const data = this.current
    let text = ''
    for (const chunk of stateChunks(data, (table, id) => this.usage.get(table, id))) {
      text += chunk
      await new Promise<void>((resolve) => setImmediate(resolve)) // requests go on between chunks
    }
    return { text, revision: data.revision, flags: data.tables.flags.size }
  }

  /** Writes the state file now if it lacks changes (tests and the bench use it). */
  async checkpoint(): Promise<void> {
    await this.settled().catch(() => {})
    await this.checkpoints.current()
  }

  async close(): Promise<void> {
    await this.flush()
    await this.pipeline.idle()
    this.checkpoints.stop()
    // after a clean stop the state file holds everything
    if (this.isWritable && !(await this.checkpoints.current()))
      this.options.log?.(
        'writing the state file at stop failed: every change is safe in the change journal, which the next start replays; an older flagd would not read it',
      )
    await this.changes.close().catch(() => {})
    await this.journal.close().catch(() => {})
    this.lock.release()
  }

  private newBatch(): Batch {
    const base = this.pipeline.newest?.draft ?? this.current
    return { draft: new Draft(base), from: base.revision, entries: [], force: false, done: deferred() }
  }

  /** Resolves when every transaction accepted so far is durable; rejects if their write failed. */
  private async settled(): Promise<void> {
    for (const batch of [...this.pipeline.inFlight]) await batch.done.promise
    if (this.open && (this.open.entries.length > 0 || this.open.force)) await this.open.done.promise
  }

  /** The open batch, if it has anything to write; it is no longer open. */
  private take(): Batch | undefined {
    const batch = this.open
    if (!this.isWritable || batch === undefined || (batch.entries.length === 0 && !batch.force)) return undefined
    this.open = undefined
    return batch
  }

  /** A batch is in place: the snapshot moves, listeners hear of it, its callers are answered. */
  private publish(batch: Batch, p: PreparedBatch): void {
    this.writer.placed(p)
    this.current = p.data
    this.writes++
    this.snapshot = new MemorySnapshot(p.data)
    if (p.mark) this.checkpoints.appended()
    this.options.onWrite?.((performance.now() - p.started) / 1000, batch.entries.length)
    for (const entry of batch.entries)
      if (entry.changes.length > 0) this.listeners.publish({ meta: entry.meta, changes: entry.changes, at: p.at })
    for (const [i, entry] of batch.entries.entries()) entry.written.resolve(p.names[i] ?? [])
    batch.done.resolve()
  }

  /** A write failed: refuse writes from now on and fail every waiting transaction. */
  private fail(batches: Batch[], cause: unknown): void {
    this.isWritable = false
    const report =
      this.options.onFailure ??
      ((err) => console.error(`flagd: writing a change failed, the service is now read-only: ${(err as Error)?.message ?? err}`))
    report(cause)
    const error = new UnavailableError()
    for (const b of [...batches, this.open]) {
      if (!b) continue
      for (const entry of b.entries) entry.written.reject(error)
      b.done.reject(error)
    }
    this.open = undefined
  }
}
