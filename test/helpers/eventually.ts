/**
 * Waiting in tests for something another process, task or replica does: one helper for what
 * several files wrote alike. The condition is re-checked on every event `wakeOn` delivers (a
 * store's commit, a request a receiver got) and, for what no event announces, every `every` ms.
 * `within` bounds a hang, generous for a busy machine, never a latency assertion: it is counted
 * in looks the timer made (an event's look is free), so no clock is read.
 */

/** How long to wait, how often to look without an event, and the events that call for a look. */
export interface EventuallyOptions {
  /** Give up after this many ms (default 20 s): the test then fails with `what`. */
  within?: number
  /** Look this often when no event comes (default 10 ms; an event source makes it a fallback). */
  every?: number
  /** Subscribes `wake` to the events after which the condition may hold; returns the unsubscribe. */
  wakeOn?: (wake: () => void) => () => void
  /** Names what was awaited, in the error a time-out throws. */
  what?: () => string
}

/** Answers the first value of `probe` that is neither undefined nor false, re-checked on events and on a timer. */
export async function eventually<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: EventuallyOptions = {},
): Promise<T> {
  const { within = 20_000, every = 10, wakeOn, what } = options
  let wake: () => void = () => {}
  const unsubscribe = wakeOn?.(() => wake()) ?? (() => {})
  const interval = wakeOn ? Math.max(every, 100) : every
  let idleLooksLeft = Math.ceil(within / interval)
  try {
    for (;;) {
      const value = await probe()
      if (value !== undefined && value !== false) return value
      if (idleLooksLeft <= 0) throw new Error(`not within ${within} ms${what ? `: ${what()}` : ''}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          idleLooksLeft--
          resolve()
        }, interval)
        wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
  } finally {
    unsubscribe()
  }
}

/** An event source for `wakeOn`: call `fire()` wherever what a test awaits may have happened. */
export function wakeSignal(): { fire(): void; wakeOn(wake: () => void): () => void } {
  const waiting = new Set<() => void>()
  return {
    fire: () => {
      for (const wake of waiting) wake()
    },
    wakeOn: (wake) => {
      waiting.add(wake)
      return () => waiting.delete(wake)
    },
  }
}
