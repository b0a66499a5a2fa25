/**
 * Flag usage counts of the file store (docs/api.md#usage): `<dataDir>/usage.sqlite`, through Bun's
 * built-in SQLite. Counts are telemetry rather than state, so they live beside the state file, not
 * in it: adding a minute's counts is one small transaction instead of rewriting the state. SQLite's
 * write-ahead log with `synchronous = FULL` makes each addition durable and all-or-nothing, so a
 * `kill -9` loses at most the counts not yet added and never corrupts the others.
 *
 * The database is opened when there are counts to add, or to read or prune one an earlier run left:
 * not at start, and not for the hourly pruning of a database that does not exist. SQLite and its
 * write-ahead log cost the process memory (docs/performance.md#what-start-up-does-not-load) that a
 * daemon that serves no evaluations should not carry.
 */

import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { UsageBucket } from '../domain/flag-usage.ts'
import type { UsageLog } from './shared-tables.ts'

/** The usage log in `dataDir`. */
export function fileUsageLog(dataDir: string): UsageLog {
  const file = join(dataDir, 'usage.sqlite')
  let opened: ReturnType<typeof open> | undefined
  const db = () => (opened ??= open(file))
  // reads and pruning need no database where none was ever written
  const existing = () => opened ?? (existsSync(file) ? db() : undefined)
  return {
    async add(buckets) {
      if (buckets.length > 0) db().addAll(buckets)
    },
    async read(sinceHour, flagIds) {
      const found = existing()
      if (found === undefined) return []
      if (flagIds === undefined) return found.since.all({ since: sinceHour }) as UsageBucket[]
      return flagIds.flatMap((flagId) => found.sinceOf.all({ since: sinceHour, flagId }) as UsageBucket[])
    },
    async prune(beforeHour) {
      existing()?.prune.run({ before: beforeHour })
    },
    close: () => opened?.db.close(),
  }
}

/** Opens (creating when missing) the database and prepares the statements the log uses. */
function open(file: string) {
  const db = new Database(file, { create: true, strict: true })
  db.run('PRAGMA journal_mode = WAL')
  db.run('PRAGMA synchronous = FULL')
  db.run(`CREATE TABLE IF NOT EXISTS usage (
    flag_id TEXT NOT NULL,
    hour TEXT NOT NULL,
    variant TEXT NOT NULL,
    reason TEXT NOT NULL,
    count INTEGER NOT NULL,
    last_at TEXT NOT NULL,
    PRIMARY KEY (flag_id, hour, variant, reason)
  ) WITHOUT ROWID`)
  const upsert = db.prepare(`INSERT INTO usage (flag_id, hour, variant, reason, count, last_at)
    VALUES ($flagId, $hour, $variant, $reason, $count, $lastAt)
    ON CONFLICT (flag_id, hour, variant, reason) DO UPDATE SET
      count = count + excluded.count,
      last_at = max(last_at, excluded.last_at)`)
  const columns = 'flag_id AS flagId, hour, variant, reason, count, last_at AS lastAt'
  return {
    db,
    addAll: db.transaction((buckets: readonly UsageBucket[]) => {
      for (const b of buckets) upsert.run({ ...b })
    }),
    since: db.prepare(`SELECT ${columns} FROM usage WHERE hour >= $since`),
    sinceOf: db.prepare(`SELECT ${columns} FROM usage WHERE hour >= $since AND flag_id = $flagId`),
    prune: db.prepare('DELETE FROM usage WHERE hour < $before'),
  }
}
