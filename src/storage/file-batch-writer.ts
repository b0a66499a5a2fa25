/**
 * The disk side of one group commit of the JSON file store: everything a batch writes before it is
 * renamed into place, and how that is taken back. Backups first (an import's), then the batch's audit
 * entries appended to the journal while the new state is serialised and staged beside the state file.
 * The rename (`StagedFile.commit`, run by `GroupCommit`) comes only once both are durable, so the
 * journal is never behind the state; a crash before it leaves entries that opening cuts off and a
 * temp file that opening removes. The store keeps the batches, the snapshot and the callers.
 */

import { auditEntriesOf } from '../domain/audit-entry.ts'
import type { Clock } from '../domain/clock.ts'
import type { StagedFile } from '../io/atomic-write.ts'
import type { AuditJournal } from './audit-journal.ts'
import { writeBackup } from './backup-store.ts'
import type { DurableTextFile, FileWriter } from './durable-text-file.ts'
import type { BackupRequest, Draft, StateData } from './memory-state.ts'
import { StateBytes } from './state-file-encoder.ts'
import { StateText } from './state-text-builder.ts'
import type { Change, CommitMeta } from './store.ts'
import type { UsageTimes, Use } from './usage-times.ts'

/** One transaction of a batch, as the writer needs it. */
export interface BatchEntry {
  meta: CommitMeta
  changes: Change[]
  backups: BackupRequest[]
}

/** A batch on disk beside the state file (journal appended, state staged), waiting for its rename. */
export interface PreparedBatch {
  /** The state the batch makes, sealed. */
  data: StateData
  /** Last-use times the staged file holds. */
  uses: Use[]
  appended: Appended | undefined
  staged: StagedFile
  /** Backup files written, per entry. */
  names: string[][]
  /** When the batch was written (its audit entries' and commits' time). */
  at: string
  /** `performance.now()` when the batch began to be written. */
  started: number
}

type Appended = Awaited<ReturnType<AuditJournal['append']>>

/** Writes batches beside the state file (see module comment). */
export class FileBatchWriter {
  /** The state file's text, rebuilt from each batch's changes, and its bytes (one buffer, reused). */
  private readonly text = new StateText()
  private readonly bytes = new StateBytes()

  constructor(
    private readonly file: DurableTextFile,
    private readonly journal: AuditJournal,
    private readonly usage: UsageTimes,
    private readonly dataDir: string,
    private readonly now: Clock,
    private readonly writer?: FileWriter,
  ) {}

  /** Writes the batch's backups, audit entries and staged state; on failure nothing of it remains. */
  async prepare(draft: Draft, entries: readonly BatchEntry[]): Promise<PreparedBatch> {
    const started = performance.now()
    const at = this.now().toISOString()
    const names: string[][] = []
    for (const entry of entries) {
      const written: string[] = []
      for (const b of entry.backups) written.push(await writeBackup(this.dataDir, b.fileName, b.text, 50, this.writer))
      names.push(written)
    }
    const audit = entries.flatMap((e) => auditEntriesOf(e.meta, at, e.changes))
    const appending = audit.length > 0 ? this.journal.append(audit) : undefined
    const data = draft.seal()
    this.usage.forgetMissing((table, id) => data.tables[table].has(id))
    const uses = this.usage.pending()
    const pieces = this.text.pieces(
      data,
      (table, id) => this.usage.get(table, id),
      entries.flatMap((e) => e.changes),
    )
    // the bytes are the reused buffer: staging writes them before this returns, and batches are
    // prepared one at a time, so the next batch cannot overwrite them before they are on disk
    const [journal, staged] = await Promise.allSettled([appending, this.file.stage(this.bytes.encode(pieces))])
    if (journal.status === 'rejected' || staged.status === 'rejected') {
      if (staged.status === 'fulfilled') await staged.value.discard()
      if (journal.status === 'fulfilled' && journal.value) await this.journal.discard(journal.value.mark).catch(() => {}) // else opening cuts them off
      throw journal.status === 'rejected' ? journal.reason : (staged as PromiseRejectedResult).reason
    }
    return { data, uses, appended: journal.value, staged: staged.value, names, at, started }
  }

  /** The batch is in place: its audit entries become readable, its last-use times count as saved. */
  placed(p: PreparedBatch): void {
    this.usage.saved(p.uses)
    if (p.appended) this.journal.publish(p.appended.items)
  }

  /** Takes back batches prepared behind a failed one (oldest first): their temp files and audit entries. */
  async undo(prepared: readonly PreparedBatch[]): Promise<void> {
    for (const p of prepared) await p.staged.discard()
    const first = prepared.find((p) => p.appended)?.appended
    if (first) await this.journal.discard(first.mark)
  }
}
