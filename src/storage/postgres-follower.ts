/**
 * How a PostgreSQL replica keeps up with the others and notices its database go and come back.
 * Other replicas' commits are announced by `NOTIFY flagd_commits`; a poll every `pollMs` is the
 * safety net (a notification can be lost across a reconnect) and the liveness check. Liveness is a
 * query of its own with a deadline, outside the store's queue of catch-ups and writes: a long import
 * keeps that queue busy without the database being gone, while a database that stops answering (no
 * error, no reset: a partition, a frozen server) is noticed within `pollMs` + `livenessMs` even though
 * nothing in the queue can finish. When it answers again, the subscription is made anew (the driver's
 * own reconnection backs off for longer than an outage may last) before the store takes writes.
 */

import type { SQL } from 'bun'

/** What the follower needs from its store. */
export interface FollowerHost {
  readonly sql: SQL
  /** Whether the store counts the database as reachable. */
  readonly healthy: boolean
  /** The liveness query (this replica's heartbeat); the follower puts the deadline on it. */
  heartbeat(): Promise<void>
  /** Applies what other replicas committed. */
  catchUp(): Promise<void>
  /** Occasional housekeeping, every 600 polls. */
  housekeeping(): Promise<void>
  /** The database did not answer (or failed). */
  lost(err: unknown): void
  /** The database answers again, subscribed anew and caught up: writes may resume. */
  recovered(): void
}

/** Follows other replicas' commits and the database's liveness (see module comment). */
export class PostgresFollower {
  private poll: ReturnType<typeof setInterval> | undefined
  private unlisten: (() => Promise<void>) | undefined
  private checking = false
  private polls = 0
  /** Notifications heard: how other replicas' commits arrive, unless one was lost (then the poll). */
  heard = 0

  constructor(
    private readonly host: FollowerHost,
    private readonly pollMs = 1000,
    private readonly livenessMs = 3000,
  ) {}

  /** Subscribes to notifications and starts the poll. */
  async start(): Promise<void> {
    await this.subscribe()
    this.poll = setInterval(() => void this.check(), this.pollMs)
    this.poll.unref?.()
  }

  /** Stops the poll (a closing store does it first). */
  stopPolling(): void {
    clearInterval(this.poll)
  }

  /** Ends the subscription. */
  async unsubscribe(): Promise<void> {
    await this.unlisten?.().catch(() => {})
  }

  private async subscribe(): Promise<void> {
    const previous = this.unlisten
    const subscription = await this.host.sql.listen('flagd_commits', () => {
      this.heard++
      void this.host.catchUp().catch(() => {})
    })
    this.unlisten = () => subscription.unlisten()
    await previous?.().catch(() => {})
  }

  /** One poll: liveness, catching up, and the way back after an outage. */
  private async check(): Promise<void> {
    if (this.checking) return // the last one still waits for an answer
    this.checking = true
    let timer: ReturnType<typeof setTimeout> | undefined
    try {
      const late = new Promise<never>(
        (_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${this.livenessMs} ms`)), this.livenessMs)),
      )
      await Promise.race([this.host.heartbeat(), late])
      clearTimeout(timer)
      await this.host.catchUp()
      if (++this.polls % 600 === 0) await this.host.housekeeping()
      if (!this.host.healthy) {
        await this.subscribe()
        await this.host.catchUp() // what was committed while the subscription was down
        this.host.recovered()
      }
    } catch (err) {
      this.host.lost(err)
    } finally {
      clearTimeout(timer)
      this.checking = false
    }
  }
}
