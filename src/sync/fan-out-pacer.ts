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

export function createFanOutPacer(run: () => void, quietMs: number): FanOutPacer {
  let lastEnd = Number.NEGATIVE_INFINITY
  let pending: { cancel(): void } | undefined
  const fire = () => {
    pending = undefined
    try {
      run()
    } finally {
      lastEnd = performance.now()
    }
  }
  return {
    notify() {
      if (pending) return
      const wait = lastEnd + quietMs - performance.now()
      if (wait <= 0) {
        const handle = setImmediate(fire)
        pending = { cancel: () => clearImmediate(handle) }
      } else {
        const handle = setTimeout(fire, wait)
        pending = { cancel: () => clearTimeout(handle) }
      }
    },
    stop() {
      pending?.cancel()
      pending = undefined
    },
  }
}
