/**
 * The store contract every service depends on (types only). Two stores implement it, the JSON file
 * store (`json-file-store.ts`) and the PostgreSQL store (`postgres-store.ts`), and both run the same
 * contract test suite (`test/storage/store-contract.ts`).
 *
 * - Readers get `committed()`: an immutable snapshot of state that is durable. A change becomes
 *   visible to readers only once it is on disk (or in the database), so no request ever sees a
 *   change that a failing commit later reverts.
 * - Every transaction's flag and segment writes pass one check before they commit
 *   (`domain/write-guard.ts`): the permissions of `meta.principal` and the protection of
 *   environments, whatever service made them.
 * - Writers call `transact(meta, work)`. `work` runs synchronously against the newest state (which
 *   may include earlier changes still being written; if those fail, this one fails too), must be
 *   pure over `tx`, and may be run again by a store that needs to retry. A thrown error undoes all of
 *   its changes. `tx.expect` states a precondition as compare-and-swap: `If-Match` is a contract of
 *   the store, not a coincidence of JavaScript's single thread.
 * - Every changed row gets a sequence number `seq`, increasing across the whole store and never
 *   reused; it numbers the change feed now and the audit log's entries later. `revision` is the
 *   last `seq`; `revisionOf(table)` the last `seq` that touched that table, so a login does not
 *   invalidate flag caches or evaluation ETags.
 * - `onCommit` listeners hear about each transaction once it is durable, in commit order, with the
 *   rows before and after, the acting principal, the source and the request id.
 */

import type { StoredToken } from '../domain/api-token.ts'
import type { AuditEntry } from '../domain/audit-entry.ts'
import type { ChangeRequest } from '../domain/change-request.ts'
import type { Environment } from '../domain/environment.ts'
import type { FlagRow } from '../domain/flag-row.ts'
import type { Principal } from '../domain/principal.ts'
import type { GuardEvidence } from '../domain/rollout-guard.ts'
import type { Segment } from '../domain/segment.ts'
import type { StoredSession } from '../domain/session.ts'
import type { StoredUser } from '../domain/user.ts'

/** The row type of each table. Every row has a stable `id`. */
export interface Rows {
  flags: FlagRow
  users: StoredUser
  sessions: StoredSession
  tokens: StoredToken
  segments: Segment
  environments: Environment
  changeRequests: ChangeRequest
}

/** A table name. */
export type Table = keyof Rows

/** Every table, in the order state files list them. */
export const TABLES: readonly Table[] = ['flags', 'users', 'sessions', 'tokens', 'segments', 'environments', 'changeRequests']

/**
 * The tables whose rows record their last use (`lastUsedAt`, precise to about a minute). A use is
 * not a change: the store keeps it in memory and writes it with the next commit, so reads never write.
 */
export type UsageTable = 'sessions' | 'tokens'
export const USAGE_TABLES: readonly UsageTable[] = ['sessions', 'tokens']

/** Through what a change was made (docs/api.md#audit-log `source`; `maintenance` is housekeeping, never audited). */
export type Source =
  | 'api'
  | 'ui'
  | 'cli'
  | 'drop-folder'
  | 'import-upload'
  | 'import-url'
  | 'rollback'
  | 'schedule'
  | 'sso'
  | 'anonymous'
  | 'bootstrap'
  | 'maintenance'
  | 'guard'

/** Committed state. Immutable: a later commit produces a new snapshot. */
export interface Snapshot {
  /** The `seq` of the newest change in this snapshot (0 for a new store). */
  readonly revision: number
  /** The `seq` of the newest change to `table`. */
  revisionOf(table: Table): number
  /** A row by id. */
  row<T extends Table>(table: T, id: string): Rows[T] | undefined
  /** Flags by name (the name is unique; the id survives renames). */
  readonly flags: ReadonlyMap<string, FlagRow>
  /** Users, sessions and tokens by id. */
  readonly users: ReadonlyMap<string, StoredUser>
  readonly sessions: ReadonlyMap<string, StoredSession>
  readonly tokens: ReadonlyMap<string, StoredToken>
  /** Segments by name. */
  readonly segments: ReadonlyMap<string, Segment>
  /** Environments by name (docs/environments.md). */
  readonly environments: ReadonlyMap<string, Environment>
  /** Change requests by id (docs/change-control.md#change-requests). */
  readonly changeRequests: ReadonlyMap<string, ChangeRequest>
  /** Segment rules by name, for compiling `$ref` (docs/targeting.md#rules). */
  segmentRules(): ReadonlyMap<string, unknown>
  /**
   * Segment rows hidden by a newer row of the same name. Only an older flagd could store them (a
   * stale name index let concurrent writes insert twice); `repairShadowedSegments` deletes them.
   */
  shadowedSegments(): readonly Segment[]
}

/** Who made a change and through what. */
export interface CommitMeta {
  principal: Principal
  source: Source
  requestId: string
  /**
   * The environment a flag write acted in, by name (docs/environments.md#audit): its audit entries show
   * the flags as it sees them. Absent: a write of every environment (create, delete, import of shared fields).
   */
  environment?: string
  /**
   * A write of every environment: the one whose view its audit entries show (the default one). Absent
   * with `environment`: the first environment a row holds a state for.
   */
  shownIn?: string
  /**
   * Set by the store, never by a caller: the rows whose change moved what a protected environment
   * serves by `flag:bypass` (their audit entries say `bypass: true`; docs/change-control.md#protected-environments).
   */
  bypassed?: readonly string[]
  /** The change request the write applies (docs/change-control.md#audit). */
  changeRequest?: string
  /** A scheduled change applied late, by this many seconds. */
  lateSeconds?: number
  /** A rollout's guard tripped: its evidence, which the audit entry carries (docs/guarded-rollouts.md#when-a-guard-trips). */
  guard?: GuardEvidence
}

/** One changed row: `before` is null on insert, `after` null on delete. */
export interface Change<T extends Table = Table> {
  seq: number
  table: T
  id: string
  before: Rows[T] | null
  after: Rows[T] | null
}

/** A durable transaction, as listeners hear it. */
export interface Commit {
  meta: CommitMeta
  changes: readonly Change[]
  /** When it became durable (ISO 8601). */
  at: string
}

/** The view `work` gets: the newest state, including its own changes so far. */
export interface Tx {
  readonly read: Snapshot
  /** Inserts or replaces the row with `row.id`. Rows must never be changed after this call. */
  put<T extends Table>(table: T, row: Rows[T]): void
  /** Deletes the row (no-op when absent). */
  delete(table: Table, id: string): void
  /**
   * Compare-and-swap: throws `PreconditionFailedError` unless the row exists with this `revision`
   * (rows that carry one: flags). `what` names the row in the message ("flag app/x").
   */
  expect(table: Table, id: string, revision: number, what: string): void
  /**
   * Saves `text` as a backup file (`<dataDir>/backups/<fileName>`, `-2`… when taken) durably in the
   * same commit, before the state it precedes; its final name is in the transaction's result.
   */
  backup(fileName: string, text: string): void
}

/** What `transact` resolves with once durable. */
export interface TxResult<T> {
  result: T
  /** The store revision after this transaction (its last `seq`). */
  revision: number
  changes: readonly Change[]
  /** Names of the backups written. */
  backups: readonly string[]
}

/** Which audit entries to read. Every given filter must hold. */
export interface AuditQuery {
  /** Entries of these flags (by internal id), whatever they were named. */
  flagIds?: readonly string[]
  /** Entries whose target had this name, before or after the change. */
  name?: string
  actorId?: string
  /** Flag entries that moved this environment's state (docs/environments.md#audit). */
  environment?: string
  /** Entries whose action starts with this (or with one of these). */
  actionPrefix?: string | readonly string[]
  sinceMs?: number
  untilMs?: number
  /** Entries with a smaller id (the next page of a newest-first read). */
  beforeId?: number
  /** Entries with a larger id, oldest first (catching up a stream). */
  afterId?: number
  limit: number
  /**
   * Stop before the entry that would take the page past this many bytes of stored entries (a page
   * always holds at least one): a page of large entries stays bounded in memory.
   */
  maxBytes?: number
}

/** Entries of one query; `truncated` when `maxBytes` stopped it before `limit` (more may match). */
export type AuditPage = AuditEntry[] & { readonly truncated?: boolean }

/**
 * The audit log (docs/api.md#audit-log): one entry per recorded change, written in the same commit as the
 * change, numbered by its `seq`. Read-only from outside the store.
 */
export interface AuditLog {
  /** Newest first; with `afterId`, oldest first. Entries older than the retention are never returned. */
  query(q: AuditQuery): Promise<AuditPage>
  /** The entry that left flag `flagId` at `revision`, if the log still has it. */
  flagRevision(flagId: string, revision: number): Promise<AuditEntry | undefined>
  /**
   * Drops entries older than `cutoffMs` (retention), for good, and never a newer one; returns how
   * many went. A store may drop less than everything older (the file store drops whole closed
   * segments of its journal); `query` hides every entry past the retention either way.
   */
  prune(cutoffMs: number): Promise<number>
}

/** The store. */
export interface Store {
  /** The audit log, written in the same commits as the changes it records. */
  readonly audit: AuditLog
  committed(): Snapshot
  transact<T>(meta: CommitMeta, work: (tx: Tx) => T): Promise<TxResult<T>>
  /** Subscribes to durable commits; returns the unsubscribe function. */
  onCommit(listener: (commit: Commit) => void): () => void
  /** Records the last use of a session or token (see `UsageTable`); an older time is ignored. */
  touch(table: UsageTable, id: string, at: string): void
  /** A row's last use: the newest of its stored `lastUsedAt` and `touch`. */
  lastUsed<T extends UsageTable>(table: T, row: Rows[T]): Rows[T]['lastUsedAt']
  /** False after a failed write: writes are refused (503) until the store recovers or restarts. */
  readonly writable: boolean
  /** Durable writes made so far (tests use it to prove that reads never write). */
  readonly writes: number
  /** Writes pending in-memory facts (last use of sessions and tokens) now. */
  flush(): Promise<void>
  /**
   * Brings `committed()` up to date with every change other processes committed before this call
   * (replicas on one database). Used on a miss that may only be news: a session or token created on
   * another replica a moment ago. A no-op for a store that only this process writes.
   */
  refresh(): Promise<void>
  /** Finishes pending commits and releases the store. */
  close(): Promise<void>
  /**
   * Everything stored, as a state file consistent at one revision, with every change acknowledged
   * before the call (`flagd backup`, docs/operations.md#backups). Only the file store has it;
   * PostgreSQL is backed up with `pg_dump`.
   */
  backup?(): Promise<{ text: string; revision: number; flags: number }>
}
