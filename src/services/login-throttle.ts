/**
 * Failed-login throttling (contract §2): sliding windows of failure times per username (ignoring
 * case) and per client address. Only failures count, so scripts that log in often are never slowed;
 * a successful login clears the username's record. Memory is bounded: old entries are dropped and the
 * number of tracked keys is capped.
 */

import { BoundedMap } from '../domain/bounded-map.ts'

/** Limits of one window. */
export interface WindowLimit {
  maxFailures: number
  windowMs: number
}

/** Throttling decisions for logins. */
export interface LoginThrottle {
  /** Seconds the caller must wait, or 0 when the attempt may proceed. */
  retryAfter(username: string, address: string, nowMs: number): number
  recordFailure(username: string, address: string, nowMs: number): void
  recordSuccess(username: string): void
}

const MAX_KEYS = 100_000

class SlidingWindow {
  private readonly failures = new BoundedMap<string, number[]>(MAX_KEYS)
  constructor(private readonly limit: WindowLimit) {}

  private live(key: string, nowMs: number): number[] {
    const times = this.failures.get(key)
    if (!times) return []
    const cutoff = nowMs - this.limit.windowMs
    while (times.length > 0 && (times[0] as number) <= cutoff) times.shift()
    if (times.length === 0) this.failures.delete(key)
    return times
  }

  retryAfterMs(key: string, nowMs: number): number {
    const times = this.live(key, nowMs)
    if (times.length < this.limit.maxFailures) return 0
    const oldestThatMustExpire = times[times.length - this.limit.maxFailures] as number
    return oldestThatMustExpire + this.limit.windowMs - nowMs
  }

  add(key: string, nowMs: number): void {
    const times = this.live(key, nowMs)
    if (times.length === 0) this.failures.set(key, times)
    times.push(nowMs)
    if (times.length > this.limit.maxFailures) times.splice(0, times.length - this.limit.maxFailures)
  }

  clear(key: string): void {
    this.failures.delete(key)
  }
}

/** Creates the throttle with one window per username and one per address. */
export function createLoginThrottle(perUser: WindowLimit, perAddress: WindowLimit): LoginThrottle {
  const users = new SlidingWindow(perUser)
  const addresses = new SlidingWindow(perAddress)
  return {
    retryAfter(username, address, nowMs) {
      const ms = Math.max(users.retryAfterMs(username.toLowerCase(), nowMs), addresses.retryAfterMs(address, nowMs))
      return ms > 0 ? Math.max(1, Math.ceil(ms / 1000)) : 0
    },
    recordFailure(username, address, nowMs) {
      users.add(username.toLowerCase(), nowMs)
      addresses.add(address, nowMs)
    },
    recordSuccess(username) {
      users.clear(username.toLowerCase())
    },
  }
}
