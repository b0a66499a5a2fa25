/**
 * One costly pattern check at a time, with the event loop free between two (docs/api.md#flags across
 * requests). A check is synchronous and each is bounded (`CHECK_BUDGET_STEPS`, about 0.4 s), but
 * sixteen requests arriving together used to run their checks back to back, and `/health` waited
 * for all of them (4.8 s). Writes that may check a pattern pass through this gate: each waits for
 * the one before it and then for a fresh turn of the event loop (a timer), so whatever else came in
 * meanwhile (a health check, a read) is answered between two checks.
 */

/** The gate. */
export interface PatternGate {
  /** Resolves when it is this caller's turn; call the answer once the synchronous work is done. */
  enter(): Promise<() => void>
}

/** Creates a gate (one per process: the event loop is one). */
export function createPatternGate(): PatternGate {
  let tail: Promise<void> = Promise.resolve()
  return {
    enter() {
      let release: () => void = () => {}
      const done = new Promise<void>((resolve) => {
        release = resolve
      })
      const turn = tail.then(() => new Promise<void>((resolve) => setTimeout(resolve, 0)))
      tail = turn.then(() => done)
      return turn.then(() => release)
    },
  }
}
