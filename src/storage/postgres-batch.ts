/**
 * One group commit of the PostgreSQL store: every transaction waiting in a batch runs in a single
 * database transaction. It locks the state row, catches up with what other replicas committed, runs
 * each transaction's work against that newest state (so `tx.expect` is a compare-and-swap across
 * replicas), writes the backups an import asked for, then the rows, change feed, audit entries and
 * pending last-use times, and commits. When the store finds the database lost meanwhile (`lost`
 * rejects), the batch fails at once; its transaction is abandoned and rolls back whenever the
 * database answers again. However long a large import takes, a database that answers never fails it.
 */

import type { SQL } from 'bun'
import { writeBackup } from './backup-store.ts'
import { type BackupRequest, Draft, DraftTx, type StateData } from './memory-state.ts'
import { remoteRevision, writeCommits, writeUsage } from './postgres-rows.ts'
import type { Change, CommitMeta, Tx, TxResult } from './store.ts'
import type { UsageTimes } from './usage-times.ts'

/** A transaction waiting for its batch. */
export interface Pending {
  meta: CommitMeta
  work: (tx: Tx) => unknown
  resolve(result: TxResult<unknown>): void
  reject(err: unknown): void
  /** The caller was answered 503 (deadline): the work must not run any more. */
  gaveUp: boolean
}

/** What one transaction of the batch did. */
export interface Ran {
  p: Pending
  /** The commit meta as recorded (`DraftTx.guarded`). */
  meta: CommitMeta
  result: unknown
  changes: readonly Change[]
  backups: string[]
}

/** What the batch needs from its store. */
export interface BatchHost {
  readonly sql: SQL
  readonly dataDir: string
  readonly usage: UsageTimes
  /** The newest state this replica knows. */
  current(): StateData
  /** Catches up to `upTo` inside `q`'s transaction, unless `wanted()` has turned false meanwhile. */
  adopt(q: SQL, upTo: number, wanted: () => boolean): Promise<void>
}

/**
 * Runs and commits `batch` (see module comment). A transaction whose work throws is rejected with its
 * error and leaves nothing behind. Resolves with the new state (undefined when nothing changed) and
 * what each transaction did; rejects when the database failed or was lost, with nothing of the batch
 * committed by it.
 */
export async function commitBatch(
  host: BatchHost,
  batch: readonly Pending[],
  at: string,
  lost: Promise<never>,
): Promise<{ state: StateData | undefined; ran: Ran[] }> {
  const ran: Ran[] = []
  let draft: Draft | undefined
  let abandoned = false // the database was lost: this transaction must not touch memory any more
  let uses: ReturnType<UsageTimes['pending']> = []
  const work = host.sql.begin(async (q) => {
    const upTo = await remoteRevision(q, true)
    if (abandoned) throw new Error('abandoned')
    if (upTo > host.current().revision) await host.adopt(q, upTo, () => !abandoned)
    draft = new Draft(host.current())
    const requests = new Map<Pending, BackupRequest[]>()
    for (const p of batch) {
      if (p.gaveUp) continue
      const tx = new DraftTx(draft)
      try {
        const result = p.work(tx)
        const meta = tx.guarded(p.meta, at)
        ran.push({ p, meta, result, changes: tx.finish(), backups: [] })
        requests.set(p, [...tx.backups])
      } catch (err) {
        tx.rollback()
        p.reject(err)
      }
    }
    if (!ran.some((r) => r.changes.length > 0 || (requests.get(r.p)?.length ?? 0) > 0)) return
    // the backup of what an import replaces is written before the import commits (docs/migrations.md)
    for (const r of ran) for (const b of requests.get(r.p) ?? []) r.backups.push(await writeBackup(host.dataDir, b.fileName, b.text, 50))
    await writeCommits(
      q,
      ran.filter((r) => r.changes.length > 0).map((r) => ({ meta: r.meta, changes: r.changes })),
      draft.seal(),
      at,
    )
    uses = host.usage.pending()
    await writeUsage(q, uses)
    if (abandoned) throw new Error('abandoned')
  })
  try {
    await Promise.race([work, lost])
  } catch (err) {
    abandoned = true
    work.catch(() => {}) // settles (rolled back) whenever the database answers
    throw err
  }
  host.usage.saved(uses)
  const state = draft && draft.revision !== host.current().revision ? draft.seal() : undefined
  return { state, ran }
}
