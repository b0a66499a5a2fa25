/**
 * The store on one JSON file (`<dataDir>/flagd.json`), implementing the store contract (`store.ts`).
 * Transactions apply to the draft of the open batch at once; batches are group-committed: while one
 * is being written, later transactions gather into the next, and each caller resolves only when a
 * write that contains its change is durable. Only then does the committed snapshot move and do the
 * commit listeners hear of it. A failed write turns the store read-only (503) and fails everything
 * pending; the committed snapshot stays what is on disk.
 */

import { join } from 'node:path'
import { Low } from 'lowdb'
import { UnavailableError } from '../domain/errors.ts'
import { removeStaleTempFiles, writeFileAtomic } from '../io/atomic-write.ts'
import { writeBackup } from './backup-store.ts'
import { DurableTextFile, type FileWriter } from './durable-text-file.ts'
import { prepareDataDir } from './data-dir.ts'
import { acquireDirLock, type DirLock } from './file-lock.ts'
import { Draft, DraftTx, MemorySnapshot, type BackupRequest, type StateData } from './memory-state.ts'
import { emptyStateText, parseStateFile, serializeState } from './state-file.ts'
import { CommitListeners } from './commit-listeners.ts'
import { UsageTimes } from './usage-times.ts'
import { type AuditLog, type Change, type Commit, type CommitMeta, type Rows, type Snapshot, type Store, type Tx, type TxResult, type UsageTable } from './store.ts'
import { auditEntriesOf } from '../domain/audit-entry.ts'
import { AuditJournal } from './audit-journal.ts'
import { fileAuditLog } from './file-audit-log.ts'

/** Options of `openJsonFileStore`. */
export interface FileStoreOptions {
  dataDir: string
  /** Replaces the durable writer; tests use it to simulate a full disk. */
  writer?: FileWriter
  /** Called after each durable write with its duration and the number of transactions it carried. */
  onWrite?: (seconds: number, transactions: number) => void
  /** Called once when a write fails and the store turns read-only. */
  onFailure?: (error: unknown) => void
  /** Told what opening did that an operator should know (an upgraded state file). */
  log?: (line: string) => void
  /** Audit entries older than this are pruned and never read (0: keep everything); default 365 days. */
  auditRetentionMs?: number
}

/** The state file's path inside a data directory. */
export function stateFilePath(dataDir: string): string {
  return join(dataDir, 'flagd.json')
}

/** Where the original of an upgraded version-1 state file is kept. */
export function v1BackupPath(dataDir: string): string {
  return join(dataDir, 'flagd.v1.json')
}

interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
  reject(err: unknown): void
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (err: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  promise.catch(() => {}) // callers attach their own handlers
  return { promise, resolve, reject }
}

interface Entry {
  meta: CommitMeta
  changes: Change[]
  backups: BackupRequest[]
  written: Deferred<string[]>
}

interface Batch {
  draft: Draft
  entries: Entry[]
  /** Write even without entries (pending session last-use times). */
  force: boolean
  done: Deferred<void>
}

/**
 * Opens a data directory: takes its lock (throws `DirectoryInUseError` when another process holds
 * it), removes temp files a crash left, loads the state file (a damaged one throws
 * `CorruptStateError`), upgrades a version-1 file (keeping its original as `flagd.v1.json`), or
 * creates an empty one.
 */
export async function openJsonFileStore(options: FileStoreOptions): Promise<Store> {
  await prepareDataDir(options.dataDir)
  const lock = acquireDirLock(options.dataDir)
  try {
    const path = stateFilePath(options.dataDir)
    await removeStaleTempFiles(path)
    const db = new Low<string>(new DurableTextFile(path, options.writer), '')
    await db.read()
    if (db.data === null || db.data === '') {
      db.data = emptyStateText()
      await db.write()
    }
    const loaded = parseStateFile(path, db.data)
    if (loaded.fromVersion < 2) {
      await writeFileAtomic(v1BackupPath(options.dataDir), db.data)
      db.data = serializeState(loaded.data, () => undefined)
      await db.write() // writeFileAtomic: durable, directory included
      options.log?.(`upgraded ${path} from schema version ${loaded.fromVersion} to 2; the original is kept as ${v1BackupPath(options.dataDir)}`)
    }
    const journal = await AuditJournal.open(options.dataDir, loaded.data.revision, options.log)
    return new JsonFileStore(db, loaded.data, lock, journal, options)
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
  private inflight: Batch | undefined
  private writing: Promise<void> | undefined
  private readonly listeners = new CommitListeners()
  private readonly usage = new UsageTimes()
  private touchedSinceWrite = false
  writes = 0

  constructor(
    private readonly db: Low<string>,
    initial: StateData,
    private readonly lock: DirLock,
    private readonly journal: AuditJournal,
    private readonly options: FileStoreOptions,
  ) {
    this.current = initial
    this.snapshot = new MemorySnapshot(initial)
    this.audit = fileAuditLog(journal, () => options.auditRetentionMs ?? 365 * 86_400_000)
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
    try {
      result = work(tx)
    } catch (err) {
      tx.rollback()
      throw err
    }
    const changes = tx.finish()
    if (changes.length === 0 && tx.backups.length === 0) {
      await this.settled() // its answer may rest on changes still being written
      return { result, revision: batch.draft.revision, changes, backups: [] }
    }
    const entry: Entry = { meta, changes, backups: [...tx.backups], written: deferred() }
    batch.entries.push(entry)
    this.writing ??= this.drain()
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
      this.writing ??= this.drain()
    }
    await this.settled().catch(() => {})
  }

  async close(): Promise<void> {
    await this.flush()
    while (this.writing) await this.writing.catch(() => {})
    await this.journal.close().catch(() => {})
    this.lock.release()
  }

  private newBatch(): Batch {
    return { draft: new Draft(this.inflight?.draft ?? this.current), entries: [], force: false, done: deferred() }
  }

  /** Resolves when every transaction accepted so far is durable; rejects if their write failed. */
  private async settled(): Promise<void> {
    if (this.inflight) await this.inflight.done.promise
    if (this.open && (this.open.entries.length > 0 || this.open.force)) await this.open.done.promise
  }

  private async drain(): Promise<void> {
    while (this.open && (this.open.entries.length > 0 || this.open.force)) {
      const batch = this.open
      this.open = undefined
      this.inflight = batch
      const started = performance.now()
      const names: string[][] = []
      const at = new Date().toISOString()
      let appended: Awaited<ReturnType<AuditJournal['append']>> | undefined
      try {
        for (const entry of batch.entries) {
          const written: string[] = []
          for (const b of entry.backups) written.push(await writeBackup(this.dataDir, b.fileName, b.text, 50, this.options.writer))
          names.push(written)
        }
        this.touchedSinceWrite = false
        // the audit entries go first: a crash before the state file leaves entries that opening cuts off
        const entries = batch.entries.flatMap((e) => auditEntriesOf(e.meta.principal, e.meta.source, e.meta.requestId, at, e.changes))
        appended = entries.length > 0 ? await this.journal.append(entries) : undefined
        const data = batch.draft.seal()
        this.usage.forgetMissing((table, id) => data.tables[table].has(id))
        const uses = this.usage.pending()
        this.db.data = serializeState(data, (table, id) => this.usage.get(table, id))
        await this.db.write()
        this.usage.saved(uses)
        this.current = data
      } catch (err) {
        if (appended) await this.journal.discard(appended.mark).catch(() => {}) // else opening cuts them off
        this.fail(batch, err)
        break
      }
      if (appended) this.journal.publish(appended.items)
      this.writes++
      this.snapshot = new MemorySnapshot(this.current)
      this.inflight = undefined
      this.options.onWrite?.((performance.now() - started) / 1000, batch.entries.length)
      for (const entry of batch.entries) if (entry.changes.length > 0) this.listeners.publish({ meta: entry.meta, changes: entry.changes, at })
      batch.entries.forEach((entry, i) => entry.written.resolve(names[i] ?? []))
      batch.done.resolve()
    }
    this.writing = undefined
  }

  /** A write failed: refuse writes from now on and fail every waiting transaction. */
  private fail(batch: Batch, cause: unknown): void {
    this.isWritable = false
    this.inflight = undefined
    const report = this.options.onFailure ?? ((err) => console.error(`flagd: writing the state file failed, the service is now read-only: ${(err as Error)?.message ?? err}`))
    report(cause)
    const error = new UnavailableError()
    for (const b of [batch, this.open]) {
      if (!b) continue
      for (const entry of b.entries) entry.written.reject(error)
      b.done.reject(error)
    }
    this.open = undefined
  }

  private get dataDir(): string {
    return this.options.dataDir
  }
}

