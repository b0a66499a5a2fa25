/**
 * The budget of the sync port's open streams (docs/openfeature.md#in-process): how many one API token
 * (or the anonymous callers together) and everyone together may hold open, and how many octets of
 * documents may wait for clients that do not read. Per connection, HTTP/2's concurrent streams cap
 * them (grpc-listeners.ts).
 */

/** The budget's limits. */
export interface StreamLimits {
  /** Open streams of one token (anonymous callers, allowed by config or the socket, have only the total). */
  perToken: number
  /** Open streams in all. */
  total: number
  /** Octets of documents written to streams whose clients have not read them, in all. */
  unreadBytes: number
}

/** The limits unless configured: room for a large fleet of providers, and a bound far below the daemon's memory. */
export const DEFAULT_STREAM_LIMITS: StreamLimits = { perToken: 200, total: 2000, unreadBytes: 64 * 2 ** 20 }

/** The budget's account. */
export interface StreamBudget {
  /** Takes a place for a stream of `key` (a token id; undefined: anonymous): its release, or undefined when there is none. */
  join(key: string | undefined): (() => void) | undefined
  /** Counts `bytes` of a document waiting for its reader; false when that passes the bound (the caller ends the stream). */
  blocked(bytes: number): boolean
  /** `bytes` of waiting documents were read, or their stream ended. */
  drained(bytes: number): void
}

/** A budget of `limits` (the defaults for those not given). */
export function createStreamBudget(limits: Partial<StreamLimits> = {}): StreamBudget {
  const { perToken, total, unreadBytes } = { ...DEFAULT_STREAM_LIMITS, ...limits }
  const byKey = new Map<string, number>()
  let open = 0
  let unread = 0
  return {
    join(key) {
      const held = key === undefined ? 0 : (byKey.get(key) ?? 0)
      if (held >= perToken || open >= total) return undefined
      if (key !== undefined) byKey.set(key, held + 1)
      open++
      let left = false
      return () => {
        if (left) return
        left = true
        open--
        if (key === undefined) return
        const now = (byKey.get(key) ?? 1) - 1
        if (now === 0) byKey.delete(key)
        else byKey.set(key, now)
      }
    },
    blocked(bytes) {
      unread += bytes
      return unread <= unreadBytes
    },
    drained(bytes) {
      unread = Math.max(0, unread - bytes)
    },
  }
}
