/**
 * What replicas on one PostgreSQL database share besides the tables of the store (docs/operations.md#replicas): the
 * token-signing secret, and the leadership for work that must happen once (webhook deliveries,
 * retention, pruning), held as a session advisory lock on a connection of its own, so that it moves
 * to another replica when its holder dies or loses the database.
 */

import { randomBytes } from 'node:crypto'
import type { SQL } from 'bun'
import type { UsageBucket } from '../domain/flag-usage.ts'
import type { FailureLedger, UsageLog } from './shared-tables.ts'

/** The secret every replica signs session tokens with, created by the first replica to start. */
export async function sharedSecret(sql: SQL): Promise<string> {
  await sql`INSERT INTO flagd_settings (key, value) VALUES ('jwt-secret', ${randomBytes(32).toString('hex')}) ON CONFLICT (key) DO NOTHING`
  const [row] = await sql`SELECT value FROM flagd_settings WHERE key = 'jwt-secret'`
  return row.value
}

/** The webhook delivery cursors, shared so that the replica taking over resumes where the last left off. */
export function sharedCursors(sql: SQL) {
  return {
    async load(): Promise<Record<string, number>> {
      const [row] = await sql`SELECT value FROM flagd_settings WHERE key = 'webhook-cursors'`
      return row ? (JSON.parse(row.value) as Record<string, number>) : {}
    },
    async save(cursors: Readonly<Record<string, number>>): Promise<void> {
      await sql`INSERT INTO flagd_settings (key, value) VALUES ('webhook-cursors', ${JSON.stringify(cursors)})
        ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`
    },
  }
}

/** Failed logins of every replica (`FailureLedger` of the login throttle), pruned after a day. */
export function sharedFailures(sql: SQL): FailureLedger {
  return {
    async recent(keys: readonly string[], sinceMs: number): Promise<Map<string, number[]>> {
      const rows =
        await sql`SELECT key, at_ms FROM flagd_login_failures WHERE key = ANY(${sql.array([...keys], 'TEXT')}) AND at_ms > ${sinceMs} ORDER BY at_ms`
      const out = new Map<string, number[]>()
      for (const r of rows as { key: string; at_ms: string }[]) out.set(r.key, [...(out.get(r.key) ?? []), Number(r.at_ms)])
      return out
    },
    async record(keys: readonly string[], atMs: number): Promise<void> {
      await sql`INSERT INTO flagd_login_failures (key, at_ms) SELECT k, ${atMs} FROM unnest(${sql.array([...keys], 'TEXT')}) AS k`
      await sql`DELETE FROM flagd_login_failures WHERE at_ms < ${atMs - 86_400_000}`
    },
    async clear(keys: readonly string[], prefixes: readonly string[]): Promise<void> {
      await sql`DELETE FROM flagd_login_failures WHERE key = ANY(${sql.array([...keys], 'TEXT')}) OR EXISTS (SELECT 1 FROM unnest(${sql.array([...prefixes], 'TEXT')}) AS p WHERE starts_with(key, p))`
    },
  }
}

/** Whether this replica currently runs the once-only work. */
export interface Leadership {
  readonly leading: boolean
  /** Calls `listener` with every change of `leading` (and once now); returns the unsubscribe function. */
  onChange(listener: (leading: boolean) => void): () => void
  stop(): Promise<void>
}

/** Leadership that never moves: the file store has one process. */
export const soleLeader: Leadership = {
  leading: true,
  onChange(listener) {
    listener(true)
    return () => {}
  },
  stop: async () => {},
}

const LEADER_LOCK = 0x666c61676401 // "flagd" + 1

/** Competes for the leader lock every `everyMs`, holding it on a reserved connection while alive. */
export function advisoryLeadership(sql: SQL, everyMs = 2000, log: (line: string) => void = () => {}): Leadership {
  const listeners = new Set<(leading: boolean) => void>()
  let leading = false
  let held: Awaited<ReturnType<SQL['reserve']>> | undefined
  let stopped = false
  const set = (next: boolean) => {
    if (next === leading) return
    leading = next
    log(next ? 'this replica now runs the once-only work (webhooks, retention, pruning)' : 'this replica no longer runs the once-only work')
    for (const l of listeners) l(next)
  }
  const drop = () => {
    held?.release()
    held = undefined
    set(false)
  }
  async function tick(): Promise<void> {
    if (stopped) return
    try {
      if (held) {
        await held`SELECT 1` // still connected, so still holding it
        return
      }
      const connection = await sql.reserve()
      const [row] = await connection`SELECT pg_try_advisory_lock(${LEADER_LOCK}) AS got`
      if (row.got) {
        held = connection
        set(true)
      } else connection.release()
    } catch {
      drop() // the connection is gone, and the lock with it
    }
  }
  void tick()
  const timer = setInterval(() => void tick(), everyMs)
  timer.unref?.()
  return {
    get leading() {
      return leading
    },
    onChange(listener) {
      listeners.add(listener)
      listener(leading)
      return () => listeners.delete(listener)
    },
    async stop() {
      stopped = true
      clearInterval(timer)
      if (held) await held`SELECT pg_advisory_unlock(${LEADER_LOCK})`.catch(() => {})
      drop()
    },
  }
}

/**
 * Flag usage counts shared by replicas (docs/api.md#usage): each replica adds its counts to the same
 * hourly buckets with an atomic upsert, so concurrent additions from several replicas add up.
 */
export function sharedUsage(sql: SQL): UsageLog {
  const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString())
  const rows = (found: unknown[]): UsageBucket[] =>
    (found as { flag_id: string; hour: unknown; variant: string; reason: string; count: string | number; last_at: unknown }[]).map((r) => ({
      flagId: r.flag_id,
      hour: iso(r.hour),
      variant: r.variant,
      reason: r.reason,
      count: Number(r.count),
      lastAt: iso(r.last_at),
    }))
  return {
    async add(buckets) {
      if (buckets.length === 0) return
      // one text array per column, cast in SQL: a single statement whatever the number of buckets
      const column = (pick: (b: UsageBucket) => string) => sql.array(buckets.map(pick), 'TEXT')
      await sql`INSERT INTO flagd_usage (flag_id, hour, variant, reason, count, last_at)
        SELECT * FROM unnest(
          ${column((b) => b.flagId)}::text[],
          ${column((b) => b.hour)}::timestamptz[],
          ${column((b) => b.variant)}::text[],
          ${column((b) => b.reason)}::text[],
          ${column((b) => String(b.count))}::bigint[],
          ${column((b) => b.lastAt)}::timestamptz[])
        ON CONFLICT (flag_id, hour, variant, reason) DO UPDATE SET
          count = flagd_usage.count + EXCLUDED.count,
          last_at = GREATEST(flagd_usage.last_at, EXCLUDED.last_at)`
    },
    async read(sinceHour, flagIds) {
      if (flagIds === undefined) return rows(await sql`SELECT * FROM flagd_usage WHERE hour >= ${sinceHour}::timestamptz`)
      return rows(
        await sql`SELECT * FROM flagd_usage WHERE hour >= ${sinceHour}::timestamptz AND flag_id = ANY(${sql.array([...flagIds], 'TEXT')})`,
      )
    },
    async prune(beforeHour) {
      await sql`DELETE FROM flagd_usage WHERE hour < ${beforeHour}::timestamptz`
    },
    close() {},
  }
}
