/**
 * How a PostgreSQL replica keeps up with the others and notices its database go and come back.
 * Other replicas' commits are announced by `NOTIFY flagd_commits`; a poll every `pollMs` is the
 * safety net (a notification can be lost across a reconnect) and the liveness check. Liveness is a
 * query of its own with a deadline, outside the store's queue of catch-ups and writes: a long import
 * keeps that queue busy without the database being gone, while a database that stops answering (no
 * error, no reset: a partition, a frozen server) is noticed within `pollMs` + `livenessMs` even though
 * nothing in the queue can finish. When it answers again, the subscription is made anew (the driver's
 * own reconnection backs off for longer than an outage may last) before the store takes writes.
 * The deadline counts time this process could listen (`LivenessDeadline`, docs/operations.md#replicas):
 * a thread held by a long import's work or a saturated machine does not turn an answer on time into
 * an outage.
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

/** Steps a liveness limit is counted in: a stall of the process costs one step, not the whole limit. */
const STEPS = 10

/**
 * A deadline of `ms` during which the process could listen: `STEPS` timers of `ms / STEPS` in a row,
 * each armed after the last one fired, so the database's answer (socket input, handled only after
 * the timers that came due while the thread was busy) gets its turn between any two steps.
 */
class LivenessDeadline {
  private timer: ReturnType<typeof setTimeout> | undefined
  /** Rejects once every step has passed. */
  readonly passed: Promise<never>

  constructor(ms: number) {
    this.passed = new Promise<never>((_, reject) => {
      let left = STEPS
      const step = () => {
        if (--left < 0) reject(new Error(`no answer within ${ms} ms`))
        else this.timer = setTimeout(step, ms / STEPS)
      }
      step()
    })
    this.passed.catch(() => {})
  }

  /** Stops counting (the answer came, or the check ended). */
  cancel(): void {
    clearTimeout(this.timer)
  }
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
    const deadline = new LivenessDeadline(this.livenessMs)
    try {
      await Promise.race([this.host.heartbeat(), deadline.passed])
      deadline.cancel()
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
      deadline.cancel()
      this.checking = false
    }
  }
}
