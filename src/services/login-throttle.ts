/**
 * Failed-login throttling (contract §2). Three sliding windows of failure times:
 * - per username (ignoring case) and client address: the owner is never locked out by a stranger
 *   at another address;
 * - per client address, whatever the usernames: one address cannot sweep many accounts;
 * - per username from all addresses together: distributed guessing meets a ceiling that one
 *   hostile address alone cannot reach.
 *
 * An attempt is *reserved* before its password is checked: the reservation counts as a failure in
 * every window until the check ends (a success withdraws it), so of any number of simultaneous
 * attempts no more than the limit are ever checked against a password. Only failures count, so
 * scripts that log in often are never slowed; a success from an address clears that username-and-
 * address count. Memory is bounded: usernames are at most 64 characters and addresses at most 64
 * (longer credentials are refused before they reach this table), windows hold at most their limit
 * of times, and every table has a ceiling on its entries.
 */

import { BoundedMap } from '../domain/bounded-map.ts'

/** Limits of one window. */
export interface WindowLimit {
  maxFailures: number
  windowMs: number
}

/** The three windows' limits. */
export interface ThrottleLimits {
  perUserAddress: WindowLimit
  perAddress: WindowLimit
  perUser: WindowLimit
}

/** A reserved attempt: settle it with the outcome of the password check. */
export interface Attempt {
  succeeded(): void
  failed(): void
}

/** Throttling decisions for logins. */
export interface LoginThrottle {
  /** Reserves an attempt, or returns the seconds to wait (≥ 1) when a window is full. */
  begin(username: string, address: string, nowMs: number): Attempt | number
  /** Forgets every count of `username` (password set, `flagd user unlock`). */
  clear(username: string): void
}

const MAX_KEYS = 100_000

class SlidingWindow {
  private readonly times = new BoundedMap<string, number[]>(MAX_KEYS)
  constructor(private readonly limit: WindowLimit) {}

  private live(key: string, nowMs: number): number[] | undefined {
    const times = this.times.get(key)
    if (!times) return undefined
    const cutoff = nowMs - this.limit.windowMs
    while (times.length > 0 && (times[0] as number) <= cutoff) times.shift()
    if (times.length === 0) this.times.delete(key)
    return times.length === 0 ? undefined : times
  }

  /** Milliseconds until the window has room for one more, 0 when it has room now. */
  waitMs(key: string, nowMs: number): number {
    const times = this.live(key, nowMs)
    if (!times || times.length < this.limit.maxFailures) return 0
    return (times[times.length - this.limit.maxFailures] as number) + this.limit.windowMs - nowMs
  }

  add(key: string, at: number): void {
    const times = this.times.get(key)
    if (times) times.push(at)
    else this.times.set(key, [at])
  }

  /** Withdraws one recorded time (a reservation that turned out a success). */
  withdraw(key: string, at: number): void {
    const times = this.times.get(key)
    const i = times?.lastIndexOf(at) ?? -1
    if (times && i !== -1) times.splice(i, 1)
    if (times?.length === 0) this.times.delete(key)
  }

  clear(key: string): void {
    this.times.delete(key)
  }

  clearWhere(match: (key: string) => boolean): void {
    for (const key of [...this.times.keys()]) if (match(key)) this.times.delete(key)
  }
}

/** Creates the throttle. */
export function createLoginThrottle(limits: ThrottleLimits): LoginThrottle {
  const userAddress = new SlidingWindow(limits.perUserAddress)
  const addresses = new SlidingWindow(limits.perAddress)
  const users = new SlidingWindow(limits.perUser)
  const pairKey = (user: string, address: string) => `${user}\u0000${address}`
  return {
    begin(username, address, nowMs) {
      const user = username.toLowerCase()
      const pair = pairKey(user, address)
      const wait = Math.max(userAddress.waitMs(pair, nowMs), addresses.waitMs(address, nowMs), users.waitMs(user, nowMs))
      if (wait > 0) return Math.max(1, Math.ceil(wait / 1000))
      userAddress.add(pair, nowMs)
      addresses.add(address, nowMs)
      users.add(user, nowMs)
      let settled = false
      return {
        failed() {
          settled = true
        },
        succeeded() {
          if (settled) return
          settled = true
          userAddress.clear(pair)
          addresses.withdraw(address, nowMs)
          users.withdraw(user, nowMs)
        },
      }
    },
    clear(username) {
      const user = username.toLowerCase()
      users.clear(user)
      userAddress.clearWhere((key) => key.startsWith(`${user}\u0000`))
    },
  }
}
