/**
 * The write queue of the PostgreSQL store: transactions that arrive while one database transaction
 * runs wait together for the next (group commit; each batch is `commitBatch` in
 * `postgres-batch.ts`), one batch at a time and in turn with this replica's catch-ups. It answers
 * every transaction exactly once: with its result once the batch committed, with its own error when
 * its work threw, or 503 when the database was lost first (`failAll`).
 */

import { UnavailableError } from '../domain/errors.ts'
import type { StateData } from './memory-state.ts'
import { type BatchHost, commitBatch, type Pending, type Ran } from './postgres-batch.ts'
import { revokes } from './postgres-replicas.ts'
import type { Commit, CommitMeta, Tx, TxResult } from './store.ts'

/** What the writer needs of its store. */
export interface WriterHost {
  readonly batchHost: BatchHost
  /** The process's clock, which stamps audit entries. */
  now(): Date
  /** Runs `fn` in turn with every other catch-up or write of this replica. */
  exclusive<T>(fn: () => Promise<T>): Promise<T>
  /** A batch could not be committed: the database is unreachable. */
  lost(err: unknown): void
  /** A batch committed `state` in `seconds` for `transactions` transactions: make it current. */
  adopted(state: StateData, seconds: number, transactions: number): void
  /** The revision this replica is at. */
  revision(): number
  publish(commit: Commit): void
  /** Resolves once every live replica has applied `revision` (a revocation holds everywhere). */
  awaitOthers(revision: number): Promise<void>
}

const unavailable = () => new UnavailableError('the database cannot be reached; the change was not made (retry when it is back)')

/** The queue (see module comment). */
export class PostgresWriter {
  private queue: Pending[] = []
  private writing: Promise<void> | undefined
  /** Transactions not answered yet. */
  private readonly waiting = new Set<Pending>()
  /** Abandons the batch in flight (the database was lost). */
  private abandon: ((err: Error) => void) | undefined

  constructor(private readonly host: WriterHost) {}

  /** Queues `work` for the next batch. */
  enqueue<T>(meta: CommitMeta, work: (tx: Tx) => T): Promise<TxResult<T>> {
    return new Promise<TxResult<T>>((resolve, reject) => {
      const pending: Pending = {
        meta,
        work,
        resolve: (r) => {
          this.waiting.delete(pending)
          resolve(r as TxResult<T>)
        },
        reject: (err) => {
          this.waiting.delete(pending)
          reject(err)
        },
        gaveUp: false,
      }
      this.waiting.add(pending)
      this.queue.push(pending)
      this.writing ??= this.drain()
    })
  }

  /** Resolves once nothing is being written. */
  async idle(): Promise<void> {
    while (this.writing) await this.writing
  }

  /**
   * The database is gone: every transaction not yet answered is answered 503 now, and the batch in
   * flight is abandoned (its database transaction rolls back whenever the database answers again).
   */
  failAll(): void {
    const err = unavailable()
    for (const p of [...this.waiting]) {
      p.gaveUp = true
      p.reject(err)
    }
    this.abandon?.(new Error('the database was lost'))
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0)
      await this.host.exclusive(() => this.commit(batch))
    }
    this.writing = undefined
  }

  /** Commits `batch` in one database transaction, then publishes and answers. */
  private async commit(batch: Pending[]): Promise<void> {
    const started = performance.now()
    const at = this.host.now().toISOString()
    let outcome: { state: StateData | undefined; ran: Ran[] }
    try {
      const lost = new Promise<never>((_, reject) => (this.abandon = reject))
      outcome = await commitBatch(this.host.batchHost, batch, at, lost)
    } catch (err) {
      this.host.lost(err)
      const err503 = unavailable()
      for (const p of batch) p.reject(err503) // a transaction whose work threw keeps its own error
      return
    } finally {
      this.abandon = undefined
    }
    if (outcome.state) this.host.adopted(outcome.state, (performance.now() - started) / 1000, outcome.ran.length)
    for (const r of outcome.ran) if (r.changes.length > 0) this.host.publish({ meta: r.meta, changes: r.changes, at })
    const revision = this.host.revision()
    const answer = () => {
      for (const r of outcome.ran)
        r.p.resolve({ result: r.result, revision: r.changes.at(-1)?.seq ?? revision, changes: r.changes, backups: r.backups })
    }
    // a revocation is answered once every live replica refuses what it revoked (outside the queue,
    // so this replica goes on applying and committing meanwhile)
    if (outcome.ran.some((r) => r.changes.some(revokes)))
      void this.host
        .awaitOthers(revision)
        .catch(() => {})
        .finally(answer)
    else answer()
  }
}
