/**
 * Failed-login throttling (docs/api.md#authentication). Three sliding windows of failure times:
 * - per username (ignoring case) and client address: the owner is never locked out by a stranger
 *   at another address;
 * - per client address, whatever the usernames: one address cannot sweep many accounts;
 * - per username from all addresses together: distributed guessing meets a ceiling that one
 *   hostile address alone cannot reach.
 *
 * An attempt is *reserved* before its password is checked, and counts against every window until
 * the check ends. When settled failures fill a window the attempt is refused (429); when only
 * reservations still in flight fill it, the attempt waits for one to settle and looks again. So of
 * any number of simultaneous attempts no more than the limit are ever checked against a password,
 * while correct logins are never refused for being simultaneous: only failures count, and scripts
 * that log in often are never slowed. A success from an address clears that username-and-address
 * count. Memory is bounded: usernames are at most 64 characters and addresses at most 64
 * (longer credentials are refused before they reach this table), windows hold at most their limit
 * of times, and every table has a ceiling on its entries.
 */

import { BoundedMap } from '../domain/bounded-map.ts'
import type { FailureLedger } from '../storage/shared-tables.ts'

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
  /** Settles as a failure; resolves once the failure is shared with the other replicas (if any). */
  failed(): Promise<void>
}

/** Throttling decisions for logins. */
export interface LoginThrottle {
  /**
   * Reserves an attempt, or resolves with the seconds to wait (≥ 1) when failures fill a window.
   * Waits while only attempts still in flight fill it.
   */
  begin(username: string, address: string, now: () => number): Promise<Attempt | number>
  /** Forgets every count of `username` (password set, `flagd user unlock`), here and in the ledger. */
  clear(username: string): Promise<void>
}

const MAX_KEYS = 100_000

class SlidingWindow {
  private readonly times = new BoundedMap<string, number[]>(MAX_KEYS)
  private readonly inflight = new Map<string, number>()
  constructor(private readonly limit: WindowLimit) {}

  /** True when settled failures and attempts in flight together fill the window. */
  busy(key: string, nowMs: number): boolean {
    return (this.live(key, nowMs)?.length ?? 0) + (this.inflight.get(key) ?? 0) >= this.limit.maxFailures
  }

  reserve(key: string): void {
    this.inflight.set(key, (this.inflight.get(key) ?? 0) + 1)
  }

  release(key: string): void {
    const n = (this.inflight.get(key) ?? 1) - 1
    if (n <= 0) this.inflight.delete(key)
    else this.inflight.set(key, n)
  }

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

  /**
   * Replaces the failure times of `key` with the shared ledger's (which hold this process's too, and
   * drop what an unlock cleared), keeping local ones after `recentMs` that may still be on their way.
   */
  replace(key: string, shared: number[], recentMs: number): void {
    const inFlight = (this.times.get(key) ?? []).filter((t) => t > recentMs && !shared.includes(t))
    const times = [...shared, ...inFlight].sort((a, b) => a - b).slice(-this.limit.maxFailures)
    if (times.length === 0) this.times.delete(key)
    else this.times.set(key, times)
  }

  add(key: string, at: number): void {
    const times = this.times.get(key)
    if (times) times.push(at)
    else this.times.set(key, [at])
  }

  clear(key: string): void {
    this.times.delete(key)
  }

  clearWhere(match: (key: string) => boolean): void {
    for (const key of [...this.times.keys()]) if (match(key)) this.times.delete(key)
  }
}

/** Creates the throttle; with a `ledger`, failures are shared with the other replicas. */
export function createLoginThrottle(limits: ThrottleLimits, ledger?: FailureLedger): LoginThrottle {
  const userAddress = new SlidingWindow(limits.perUserAddress)
  const addresses = new SlidingWindow(limits.perAddress)
  const users = new SlidingWindow(limits.perUser)
  const pairKey = (user: string, address: string) => `${user}\u0000${address}`
  // attempts waiting for one in flight to settle; woken (to look again) by every settlement
  let waiters: (() => void)[] = []
  const wake = () => {
    const woken = waiters
    waiters = []
    for (const w of woken) w()
  }
  return {
    async begin(username, address, now) {
      const user = username.toLowerCase()
      const pair = pairKey(user, address)
      const windows: [SlidingWindow, string][] = [
        [userAddress, pair],
        [addresses, address],
        [users, user],
      ]
      // the ledger's names: the pair's separator is one no username or address contains
      const shared = [`pair:${user} ${address}`, `addr:${address}`, `user:${user}`]
      if (ledger) {
        const longest = Math.max(limits.perUserAddress.windowMs, limits.perAddress.windowMs, limits.perUser.windowMs)
        const known = await ledger.recent(shared, now() - longest).catch(() => undefined) // unreachable: this process's counts still hold
        if (known) for (const [i, [w, key]] of windows.entries()) w.replace(key, known.get(shared[i] as string) ?? [], now() - 5000)
      }
      for (;;) {
        const at = now()
        const wait = Math.max(...windows.map(([w, key]) => w.waitMs(key, at)))
        if (wait > 0) return Math.max(1, Math.ceil(wait / 1000))
        if (!windows.some(([w, key]) => w.busy(key, at))) break
        await new Promise<void>((resolve) => waiters.push(resolve))
      }
      for (const [w, key] of windows) w.reserve(key)
      let settled = false
      const settle = (failed: boolean) => {
        if (settled) return
        settled = true
        const at = now()
        for (const [w, key] of windows) {
          w.release(key)
          if (failed) w.add(key, at)
        }
        if (!failed) userAddress.clear(pair)
        wake()
        // a failure is shared before it is answered, so the next attempt, wherever it lands, counts it
        if (failed) return ledger?.record(shared, at).catch(() => {})
        void ledger?.clear([shared[0] as string], []).catch(() => {})
      }
      return { failed: async () => settle(true), succeeded: () => void settle(false) }
    },
    async clear(username) {
      const user = username.toLowerCase()
      users.clear(user)
      userAddress.clearWhere((key) => key.startsWith(`${user}\u0000`))
      await ledger?.clear([`user:${user}`], [`pair:${user} `]).catch(() => {})
    },
  }
}
