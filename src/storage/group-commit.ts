/**
 * Group commit with two batches in flight, for a store whose write has two phases: `prepare` (make
 * the batch durable beside the data: the audit journal appended, the new state file staged) and
 * `commit` (put it in place: the rename). While one batch commits, the next one prepares, so a
 * commit's rename and directory fsync no longer hold up the writes behind it (docs/performance.md: under 16
 * writers the file store spent a quarter of each write cycle there).
 *
 * Order is kept: batches are prepared one after another and committed one after another, and a
 * batch commits only after the batch before it has. When any phase fails, everything not yet in
 * place is undone (`undo`, given the uncommitted batches oldest first) and every waiting batch,
 * including the open one, fails: the store then refuses writes. The pipeline never lets more than
 * one prepared batch wait, so a slow disk holds at most two batches' worth of temp files.
 */

/** A promise with its resolvers, as the platform makes them. */
export type Deferred<T> = PromiseWithResolvers<T>

/** `Promise.withResolvers`, with rejection handled here: waiters attach their own handlers. */
export function deferred<T>(): Deferred<T> {
  const d = Promise.withResolvers<T>()
  d.promise.catch(() => {})
  return d
}

/** What the pipeline needs of a batch: a way to tell its waiters that it is done or failed. */
export interface PipelineBatch {
  done: Deferred<void>
}

/** The store's side of the pipeline. */
export interface BatchSteps<B extends PipelineBatch, P> {
  /** The open batch, taken for writing (it is no longer open), or `undefined` when there is nothing to write. */
  take(): B | undefined
  /** The first phase; on failure it cleans up its own work before throwing. */
  prepare(batch: B): Promise<P>
  /** The second phase: puts a prepared batch in place. */
  commit(batch: B, prepared: P): Promise<void>
  /** A batch is in place: publish it and resolve its waiters (then resolve `batch.done`). */
  committed(batch: B, prepared: P): void
  /**
   * Undoes prepared batches that will never be committed (oldest first). A batch whose commit failed
   * is not among them: its rename may have happened, and what it prepared (journal entries ahead of
   * the state) is what a crash would leave too, which opening the store resolves.
   */
  undo(prepared: P[]): Promise<void>
  /** A phase failed: refuse writes and fail `batches` and whatever else waits. */
  failed(batches: B[], cause: unknown): void
}

type Outcome<B> = { ok: true } | { ok: false; batch: B; cause: unknown }

/** The pipeline (see module comment). */
export class GroupCommit<B extends PipelineBatch, P> {
  private running: Promise<void> | undefined
  private again = false
  /** Batches taken and not yet in place, oldest first (at most two). */
  private readonly taken: B[] = []

  constructor(private readonly steps: BatchSteps<B, P>) {}

  /** The newest batch being written, if any: the next batch builds on its state. */
  get newest(): B | undefined {
    return this.taken.at(-1)
  }

  /** Batches being written, oldest first. */
  get inFlight(): readonly B[] {
    return this.taken
  }

  /** There is something to write: starts the writer, or has the running one look again before it stops. */
  kick(): Promise<void> {
    this.again = true
    this.running ??= this.loop()
    return this.running
  }

  /** Resolves once the writer has stopped (for closing the store). */
  async idle(): Promise<void> {
    while (this.running) await this.running.catch(() => {})
  }

  private async loop(): Promise<void> {
    try {
      // a kick that came after `run` last found nothing to take must not be lost
      while (this.again) {
        this.again = false
        await this.run()
      }
    } finally {
      this.running = undefined
    }
  }

  private async run(): Promise<void> {
    let committing: Promise<Outcome<B>> | undefined
    for (;;) {
      const batch = this.steps.take()
      if (batch === undefined) {
        if (committing === undefined) return
        // nothing to prepare: wait for the commit, then look again (transactions may have come)
        const outcome = await committing
        committing = undefined
        if (!outcome.ok) return this.fail([outcome.batch], [], outcome.cause)
        continue
      }
      this.taken.push(batch)
      const prepared = await this.steps.prepare(batch).then(
        (value) => ({ ok: true as const, value }),
        (cause: unknown) => ({ ok: false as const, cause }),
      )
      // the batch before must be in place first; if it failed, so does this one (undone if prepared)
      const before = await committing
      if (before?.ok === false) return this.fail([before.batch, batch], prepared.ok ? [prepared.value] : [], before.cause)
      if (!prepared.ok) return this.fail([batch], [], prepared.cause)
      committing = this.commit(batch, prepared.value)
    }
  }

  private async commit(batch: B, prepared: P): Promise<Outcome<B>> {
    try {
      await this.steps.commit(batch, prepared)
    } catch (cause) {
      return { ok: false, batch, cause }
    }
    this.taken.splice(this.taken.indexOf(batch), 1)
    this.steps.committed(batch, prepared)
    return { ok: true }
  }

  private async fail(batches: B[], prepared: P[], cause: unknown): Promise<void> {
    if (prepared.length > 0) await this.steps.undo(prepared).catch(() => {})
    this.taken.length = 0
    this.steps.failed(batches, cause)
  }
}
