/**
 * The store on PostgreSQL (docs/operations.md#replicas), implementing the store contract (`store.ts`) for N replicas
 * sharing one database. Reads come from memory: a committed snapshot kept current by the change feed,
 * pulled when another replica's commit is notified (`LISTEN flagd_commits`) and by a cheap revision
 * poll as the safety net (a notification can be lost across a reconnect; both in `postgres-follower.ts`,
 * with the database's liveness). Writes are group-committed (`postgres-writer.ts`): the transactions
 * that arrive while one database transaction runs go together into the next (`postgres-batch.ts`:
 * lock, catch up, run the work, write rows, feed and audit entries, commit), so `tx.expect` is a
 * compare-and-swap across every replica and two changes never share a revision.
 *
 * When the database cannot be reached, writes answer 503 (`UnavailableError`), reads go on from
 * memory, and the poll notices when it is back: unlike the file store, no restart is needed.
 */

import { SQL } from 'bun'
import type { Clock } from '../domain/clock.ts'
import { UnavailableError } from '../domain/errors.ts'
import { redactedUrl } from '../domain/redacted-url.ts'
import { CommitListeners } from './commit-listeners.ts'
import { prepareDataDir } from './data-dir.ts'
import { MemorySnapshot, type StateData } from './memory-state.ts'
import { postgresAuditLog } from './postgres-audit-log.ts'
import type { BatchHost } from './postgres-batch.ts'
import { type FollowerHost, PostgresFollower } from './postgres-follower.ts'
import { ReplicaRegistry } from './postgres-replicas.ts'
import { applyCommits, commitsSince, loadState, pruneFeed, remoteRevision, writeUsage } from './postgres-rows.ts'
import { migrate } from './postgres-schema.ts'
import { PostgresWriter, type WriterHost } from './postgres-writer.ts'
import type { AuditLog, Commit, CommitMeta, Rows, Snapshot, Store, Tx, TxResult, UsageTable } from './store.ts'
import { UsageTimes } from './usage-times.ts'

/** Options of `openPostgresStore`. */
export interface PostgresStoreOptions {
  /** `postgres://user:password@host:5432/database`. */
  url: string
  /** This replica's data directory: import backups are written here. */
  dataDir: string
  /** The process's clock: audit entries are stamped and pruned by it (docs/development.md#time). */
  now: Clock
  /** Audit entries older than this are pruned and never read (0: keep everything); default 365 days. */
  auditRetentionMs?: number
  /** How often the revision is polled (the safety net under notifications); default 1000 ms. */
  pollMs?: number
  /** A liveness query not answered within this marks the database lost (writes 503); default 3000 ms. */
  livenessMs?: number
  onWrite?: (seconds: number, transactions: number) => void
  /** Told when the database is lost. */
  log?: (line: string) => void
  /** Told when it is back. */
  info?: (line: string) => void
  /** The default environment (config `environment`): flags stored before environments get their state there. */
  environment?: string
}

/** Connects, creates or upgrades the tables, loads the state and starts following other replicas. */
export async function openPostgresStore(
  options: PostgresStoreOptions,
): Promise<Store & { readonly sql: SQL; readonly notificationsHeard: number }> {
  await prepareDataDir(options.dataDir)
  const sql = new SQL({ url: options.url, max: 8, connectionTimeout: 5, idleTimeout: 60 })
  try {
    await migrate(sql, options.environment)
    const store = new PostgresStore(sql, await loadState(sql), options)
    await store.follow()
    return store
  } catch (err) {
    await sql.close().catch(() => {})
    const e = err as Error & { code?: string; errno?: string }
    const detail = [e.message, e.code && e.code !== e.message ? e.code : undefined].filter(Boolean).join(', ')
    throw new Error(`cannot open the PostgreSQL database ${redactedUrl(options.url)}: ${detail}`, { cause: err })
  }
}

// The follower's and writer's host methods are public here only: the class itself is never exported.
class PostgresStore implements Store, FollowerHost, WriterHost {
  readonly audit: AuditLog
  writes = 0
  private current: StateData
  private snapshot: MemorySnapshot
  healthy = true
  private turn: Promise<unknown> = Promise.resolve()
  private readonly listeners = new CommitListeners()
  private readonly usage = new UsageTimes()
  private readonly replicas: ReplicaRegistry
  private readonly follower: PostgresFollower
  private readonly writer: PostgresWriter = new PostgresWriter(this)
  readonly now = (): Date => this.options.now()

  /** How many commit notifications this replica has heard (the replica tests tell them from polls). */
  get notificationsHeard(): number {
    return this.follower.heard
  }
  readonly batchHost: BatchHost
  private closed = false
  private queued: Promise<void> | undefined

  constructor(
    readonly sql: SQL,
    initial: StateData,
    private readonly options: PostgresStoreOptions,
  ) {
    this.current = initial
    this.replicas = new ReplicaRegistry(sql)
    this.replicas.report(initial.revision)
    this.snapshot = new MemorySnapshot(initial)
    this.audit = postgresAuditLog(
      sql,
      () => options.auditRetentionMs ?? 365 * 86_400_000,
      () => options.now().getTime(),
    )
    this.follower = new PostgresFollower(this, options.pollMs, options.livenessMs)
    this.batchHost = {
      sql,
      dataDir: options.dataDir,
      usage: this.usage,
      current: () => this.current,
      adopt: (q, upTo, wanted) => this.adopt(q, upTo, wanted),
    }
  }

  /** Starts following commits made by other replicas (notifications, and the poll). */
  follow(): Promise<void> {
    return this.follower.start()
  }

  get writable(): boolean {
    return this.healthy
  }

  committed(): Snapshot {
    return this.snapshot
  }

  onCommit(listener: (commit: Commit) => void): () => void {
    return this.listeners.add(listener)
  }

  touch(table: UsageTable, id: string, at: string): void {
    this.usage.touch(table, id, at)
  }

  lastUsed<T extends UsageTable>(table: T, row: Rows[T]): Rows[T]['lastUsedAt'] {
    return this.usage.lastUsed(table, row)
  }

  transact<T>(meta: CommitMeta, work: (tx: Tx) => T): Promise<TxResult<T>> {
    if (!this.healthy || this.closed)
      return Promise.reject(new UnavailableError('the database cannot be reached; writes are refused until it is back (reads go on)'))
    return this.writer.enqueue(meta, work)
  }

  async flush(): Promise<void> {
    await this.exclusive(async () => {
      const uses = this.usage.pending()
      await writeUsage(this.sql, uses)
      this.usage.saved(uses)
    }).catch(() => {})
  }

  /**
   * Finishes the writes in flight and writes last-use times, then disconnects. A database that does
   * not answer may not hold a stopping daemon: after 5 s the connections are closed regardless.
   */
  async close(): Promise<void> {
    this.closed = true
    this.follower.stopPolling()
    const finish = (async () => {
      await this.writer.idle()
      await this.flush()
      await this.follower.unsubscribe()
      await this.replicas.leave().catch(() => {})
    })()
    await Promise.race([finish, Bun.sleep(5000)])
    await this.sql.close({ timeout: 1 })
  }

  /** Runs `fn` after every earlier catch-up or write of this replica (they all move `current`). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.turn.then(fn, fn)
    this.turn = run.catch(() => {})
    return run
  }

  heartbeat(): Promise<void> {
    return this.replicas.heartbeat(this.current.revision)
  }

  async housekeeping(): Promise<void> {
    await pruneFeed(this.sql)
    this.usage.forgetMissing((table, id) => this.current.tables[table].has(id))
  }

  recovered(): void {
    this.healthy = true
    ;(this.options.info ?? this.options.log)?.('the database is reachable again; writes are accepted')
  }

  /**
   * The database is gone: every write not yet answered is answered 503 now (a write whose
   * transaction has not committed is abandoned, and rolls back whenever the database answers again),
   * and new writes are refused until the poll finds it back.
   */
  lost(err: unknown): void {
    if (!this.healthy || this.closed) return
    this.healthy = false
    this.options.log?.(
      `the database cannot be reached (${(err as Error)?.message ?? err}); writes answer 503 until it is back, reads go on from memory`,
    )
    this.writer.failAll()
  }

  /**
   * Catches up after every commit made before this call. Callers that arrive while a catch-up waits
   * for its turn share it (a burst of notifications costs one query); one already running may have
   * read the revision before their commit, so it is never joined.
   */
  catchUp(): Promise<void> {
    if (this.queued) return this.queued
    const run = this.exclusive(async () => {
      this.queued = undefined
      const upTo = await remoteRevision(this.sql)
      if (upTo > this.current.revision) await this.adopt(this.sql, upTo)
    })
    this.queued = run
    return run
  }

  async refresh(): Promise<void> {
    await this.catchUp().catch((err) => this.lost(err))
  }

  /** Applies commits made elsewhere, in order; reloads everything when the feed no longer reaches back. */
  private async adopt(q: SQL, upTo: number, wanted: () => boolean = () => true): Promise<void> {
    const commits = await commitsSince(q, this.current.revision, upTo)
    const next = commits ? applyCommits(this.current, commits) : await loadState(this.sql)
    if (!wanted()) throw new Error('abandoned')
    this.current = next
    this.replicas.report(next.revision)
    this.snapshot = new MemorySnapshot(this.current)
    for (const commit of commits ?? []) this.listeners.publish(commit)
  }

  adopted(state: StateData, seconds: number, transactions: number): void {
    this.current = state
    this.snapshot = new MemorySnapshot(state)
    this.writes++
    this.options.onWrite?.(seconds, transactions)
    this.replicas.report(state.revision)
  }

  revision(): number {
    return this.current.revision
  }

  publish(commit: Commit): void {
    this.listeners.publish(commit)
  }

  awaitOthers(revision: number): Promise<void> {
    return this.replicas.awaitOthers(revision)
  }
}
