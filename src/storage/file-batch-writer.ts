/**
 * The disk side of one group commit of the JSON file store: backups first (an import's), then the
 * batch's audit entries written to the audit journal, then one line of the change journal with the
 * rows the batch changed, the last-use times it saves and those audit entries, fdatasynced. That
 * fdatasync is the commit's durable point (docs/operations.md#durability): the bytes written are
 * the change's, whatever the store holds. The audit lines are not synced here: a crash may lose
 * them, and opening writes them again from the change journal, which a checkpoint lets go only once
 * the audit journal is synced. The store keeps the batches, the snapshot and the callers.
 */

import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { auditEntriesOf } from '../domain/audit-entry.ts'
import type { Clock } from '../domain/clock.ts'
import { writeFileAtomic } from '../io/atomic-write.ts'
import type { AuditJournal } from './audit-journal.ts'
import { backupDir, writeBackup } from './backup-store.ts'
import type { ChangeJournal, DiskFaults, JournalChange, JournalMark, JournalUse } from './change-journal.ts'
import type { JsonTexts } from './json-texts.ts'
import type { BackupRequest, Draft, StateData } from './memory-state.ts'
import type { Change, CommitMeta } from './store.ts'
import type { UsageTimes, Use } from './usage-times.ts'

/** One transaction of a batch, as the writer needs it. */
export interface BatchEntry {
  meta: CommitMeta
  changes: Change[]
  backups: BackupRequest[]
}

/** A batch made durable, waiting to be published. */
export interface PreparedBatch {
  /** The state the batch makes, sealed. */
  data: StateData
  /** Last-use times the batch saved. */
  uses: Use[]
  appended: Appended | undefined
  /** Where the batch's change journal line begins (none when it had nothing to write). */
  mark: JournalMark | undefined
  /** Backup files written, per entry. */
  names: string[][]
  /** When the batch was written (its audit entries' and commits' time). */
  at: string
  /** `performance.now()` when the batch began to be written. */
  started: number
}

type Appended = Awaited<ReturnType<AuditJournal['append']>>

/** Writes batches to the journals (see module comment). */
export class FileBatchWriter {
  constructor(
    private readonly changes: ChangeJournal,
    private readonly journal: AuditJournal,
    private readonly usage: UsageTimes,
    private readonly dataDir: string,
    private readonly now: Clock,
    private readonly texts: JsonTexts,
    private readonly faults?: DiskFaults,
  ) {}

  /** Writes the batch (from revision `from`) durably; on failure nothing of it remains. */
  async prepare(draft: Draft, from: number, entries: readonly BatchEntry[]): Promise<PreparedBatch> {
    const started = performance.now()
    const at = this.now().toISOString()
    const names: string[][] = []
    const faults = this.faults
    const writeFile = faults
      ? async (path: string, text: string) => {
          await faults(path)
          await writeFileAtomic(path, text)
        }
      : undefined
    for (const entry of entries) {
      const written: string[] = []
      for (const b of entry.backups) written.push(await writeBackup(this.dataDir, b.fileName, b.text, 50, writeFile))
      names.push(written)
    }
    const data = draft.seal()
    this.usage.forgetMissing((table, id) => data.tables[table].has(id))
    const uses = this.usage.pending()
    const changes = entries.flatMap((e) => e.changes)
    if (changes.length === 0 && uses.length === 0) return { data, uses, appended: undefined, mark: undefined, names, at, started }
    const audit = entries.flatMap((e) => auditEntriesOf(e.meta, at, e.changes))
    // each entry's and each row's JSON is made once: both journals and the next checkpoint use it
    const auditTexts = audit.map((e) => JSON.stringify(e))
    let appended: Appended | undefined
    try {
      appended = audit.length > 0 ? await this.journal.append(audit, false, auditTexts) : undefined
      const batch = {
        ...(data.storeId === undefined ? {} : { store: data.storeId }),
        from,
        to: data.revision,
        at,
        changes: changes.map((c): JournalChange => [c.seq, c.table, c.id, c.after]),
        uses: uses.map((u): JournalUse => [u.tbl, u.id, u.at]),
        audit,
      }
      const mark = await this.changes.append(batch, { row: (row) => this.texts.of(row), audit: auditTexts })
      return { data, uses, appended, mark, names, at, started }
    } catch (err) {
      if (appended) await this.journal.discard(appended.mark).catch(() => {}) // else opening cuts them off
      // an import that never happened leaves no backup of it
      for (const name of names.flat()) await rm(join(backupDir(this.dataDir), name), { force: true }).catch(() => {})
      throw err
    }
  }

  /** The batch is durable: its audit entries become readable, its last-use times count as saved. */
  placed(p: PreparedBatch): void {
    this.usage.saved(p.uses)
    if (p.appended) this.journal.publish(p.appended.items)
  }

  /** Takes back batches made durable behind a failed one (oldest first): their journal lines. */
  async undo(prepared: readonly PreparedBatch[]): Promise<void> {
    const first = prepared.find((p) => p.mark)?.mark
    if (first) await this.changes.discard(first)
    const audit = prepared.find((p) => p.appended)?.appended
    if (audit) await this.journal.discard(audit.mark)
  }
}
