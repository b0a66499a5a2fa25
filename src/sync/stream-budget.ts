/**
 * The budget of the sync port's open streams (docs/openfeature.md#in-process): how many one API token
 * (or the anonymous callers together) and everyone together may hold open, and how many octets of
 * documents may be in flight (written to a stream, not yet taken by its connection: a client that
 * grants no window holds its document there). Per connection, HTTP/2's concurrent streams cap
 * them (grpc-listeners.ts).
 */

/** The budget's limits. */
export interface StreamLimits {
  /** Open streams of one token (anonymous callers, allowed by config or the socket, have only the total). */
  perToken: number
  /** Open streams in all. */
  total: number
  /** Octets of documents in flight on all streams (one that is larger than this still goes out alone). */
  unreadBytes: number
}

/** The limits unless configured: room for a large fleet of providers, and a bound far below the daemon's memory. */
export const DEFAULT_STREAM_LIMITS: StreamLimits = { perToken: 200, total: 2000, unreadBytes: 64 * 2 ** 20 }

/** The budget's account. */
export interface StreamBudget {
  /** Takes a place for a stream of `key` (a token id; undefined: anonymous): its release, or undefined when there is none. */
  join(key: string | undefined): (() => void) | undefined
  /** Whether `bytes` more in flight stay within the bound (always, when nothing is in flight). */
  fits(bytes: number): boolean
  /** Counts `bytes` of a document in flight when they fit; false (and nothing counted) when not. */
  take(bytes: number): boolean
  /** `bytes` in flight were taken by their connection, or their stream ended. */
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
    fits(bytes) {
      return unread === 0 || unread + bytes <= unreadBytes
    },
    take(bytes) {
      if (!this.fits(bytes)) return false
      unread += bytes
      return true
    },
    drained(bytes) {
      unread = Math.max(0, unread - bytes)
    },
  }
}
