/**
 * Checkpoints of the file store (docs/operations.md#durability): the state file rewritten whole from
 * the committed state, in the background, so that the change journal can let go of what it holds.
 * One runs when the journal has grown past the state file's size (at least `afterBytes`), when
 * `afterMs` have passed since the first change the state file lacks, and at a clean stop; never two
 * at once. A checkpoint starts a new journal segment, syncs the audit journal (the change journal's
 * copies of its entries are about to go), writes the state file and deletes the segments it covers.
 * A checkpoint that fails (a full disk) changes nothing: the journal still holds every change, and
 * the next one tries again.
 */

import type { AuditJournal } from './audit-journal.ts'
import type { ChangeJournal, DiskFaults } from './change-journal.ts'
import type { JsonTexts } from './json-texts.ts'
import type { StateData } from './memory-state.ts'
import { writeStateFile } from './state-file-writer.ts'
import type { LastUsed } from './state-text-builder.ts'

/** When checkpoints run (tests set both; the defaults are documented in docs/operations.md). */
export interface CheckpointPolicy {
  /** Journal bytes (at least; the state file's size when larger) that start one. */
  afterBytes: number
  /** Time after the first change the state file lacks that starts one (0: only by size and at stop). */
  afterMs: number
}

export const DEFAULT_CHECKPOINTS: CheckpointPolicy = { afterBytes: 16 * 1024 * 1024, afterMs: 60_000 }

/** What a checkpoint needs of the store. */
export interface CheckpointDeps {
  path: string
  changes: ChangeJournal
  audit: AuditJournal
  committed: () => StateData
  lastUsed: LastUsed
  /** The rows' texts made for the change journal since the last checkpoint: the state file reuses them. */
  texts: JsonTexts
  faults?: DiskFaults
  /** Told when a checkpoint fails (it is retried later). */
  failed: (err: unknown) => void
}

/** The checkpoints of one store (see module comment). */
export class StateCheckpoints {
  private running: Promise<void> | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  /** The journal holds changes the state file lacks. */
  private behind: boolean
  private stateBytes = 0
  private stopped = false
  /** Checkpoints written (tests and the bench read it). */
  count = 0

  constructor(
    private readonly deps: CheckpointDeps,
    private readonly policy: CheckpointPolicy,
    behind: boolean,
    /** The state file's size at opening: the journal may grow to it before a checkpoint is due. */
    stateBytes: number,
  ) {
    this.behind = behind
    this.stateBytes = stateBytes
    if (behind) this.schedule()
  }

  /** A batch was made durable in the journal: a checkpoint starts now when it has grown enough, or later. */
  appended(): void {
    this.behind = true
    if (this.deps.changes.bytesSinceRoll >= Math.max(this.policy.afterBytes, this.stateBytes)) void this.run()
    else this.schedule()
  }

  /** Writes a checkpoint now unless the state file is current; resolves when it is written (or failed). */
  run(): Promise<void> {
    this.running ??= this.once().finally(() => {
      this.running = undefined
    })
    return this.running
  }

  /**
   * Makes the state file hold every change committed before the call: waits for a checkpoint under
   * way (its snapshot may predate the last commits), then writes one if anything is still missing.
   * Answers whether the state file is current.
   */
  async current(): Promise<boolean> {
    while (this.running) await this.running
    if (this.behind) await this.run()
    return !this.behind
  }

  /** Stops the timer for good (the store is closing; it runs a last checkpoint itself). */
  stop(): void {
    this.stopped = true
    this.unschedule()
  }

  private unschedule(): void {
    clearTimeout(this.timer)
    this.timer = undefined
  }

  private schedule(): void {
    if (this.stopped || this.timer !== undefined || this.policy.afterMs <= 0) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      void this.run()
    }, this.policy.afterMs)
    this.timer.unref?.()
  }

  private async once(): Promise<void> {
    this.unschedule()
    if (!this.behind) return
    this.behind = false
    const { changes, audit, path } = this.deps
    changes.roll() // what is appended from now on is not in this checkpoint
    const known = this.deps.texts.roll() // nor are the texts of its rows kept past it
    const data = this.deps.committed()
    try {
      await audit.sync()
      this.stateBytes = await writeStateFile(path, data, this.deps.lastUsed, this.deps.faults, (row) => known.known(row))
      await changes.dropThrough(data.revision)
      this.count++
    } catch (err) {
      this.behind = true
      this.deps.failed(err)
      this.schedule()
    }
  }
}
