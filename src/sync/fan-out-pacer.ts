/**
 * When the sync transport writes a change out to its streams. A change after a quiet spell goes out
 * at once (on the next turn of the event loop, so every change of one commit travels together); a
 * change that follows a fan-out closer than `quietMs` waits until that much time has passed since the
 * fan-out ended, and everything that arrives meanwhile goes out as one document.
 *
 * Why not a plain delay: merging by always waiting `quietMs` made every single change `quietMs` late
 * (10 of the ~50 ms a change took to reach 500 streams), while only bursts need merging. The quiet
 * time after each fan-out also bounds the share of the CPU that a stream of writes can make the
 * fan-outs take, whatever the number of streams.
 */

/** Schedules fan-outs: `notify` after each change; `stop` cancels the one pending. */
export interface FanOutPacer {
  notify(): void
  stop(): void
}

/** The time the pacer reads and its delayed calls: the process's by default, a test's own in tests. */
export interface PacerTimer {
  /** Milliseconds on a monotonic scale. */
  now(): number
  /** Calls `fn` once `ms` have passed; answers the cancel. */
  after(ms: number, fn: () => void): () => void
}

/** The process's monotonic time and timers. */
export const processTimer: PacerTimer = {
  now: () => performance.now(),
  after(ms, fn) {
    const handle = setTimeout(fn, ms)
    return () => clearTimeout(handle)
  },
}

/**
 * `run` writes one fan-out and calls `done` when it has finished, at once or in later turns of the
 * event loop; changes notified meanwhile wait for it, then for the quiet time (read from `timer`).
 */
export function createFanOutPacer(run: (done: () => void) => void, quietMs: number, timer: PacerTimer = processTimer): FanOutPacer {
  let lastEnd = Number.NEGATIVE_INFINITY
  let pending: { cancel(): void } | undefined
  let running = false
  let again = false
  const schedule = () => {
    const wait = lastEnd + quietMs - timer.now()
    if (wait <= 0) {
      const handle = setImmediate(fire)
      pending = { cancel: () => clearImmediate(handle) }
    } else {
      pending = { cancel: timer.after(wait, fire) }
    }
  }
  const finish = () => {
    if (!running) return
    running = false
    lastEnd = timer.now()
    if (again) {
      again = false
      schedule()
    }
  }
  function fire() {
    pending = undefined
    running = true
    try {
      run(finish)
    } catch (err) {
      finish()
      throw err
    }
  }
  return {
    notify() {
      if (running) again = true
      else if (!pending) schedule()
    },
    stop() {
      pending?.cancel()
      pending = undefined
      again = false
    },
  }
}
