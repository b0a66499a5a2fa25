/**
 * Flag usage counts of the file store (contract §22): `<dataDir>/usage.sqlite`, through Bun's
 * built-in SQLite. Counts are telemetry rather than state, so they live beside the state file, not
 * in it: adding a minute's counts is one small transaction instead of rewriting the state. SQLite's
 * write-ahead log with `synchronous = FULL` makes each addition durable and all-or-nothing, so a
 * `kill -9` loses at most the counts not yet added and never corrupts the others.
 */

import { Database } from 'bun:sqlite'
import { join } from 'node:path'
import type { UsageBucket } from '../domain/flag-usage.ts'
import type { UsageLog } from './shared-tables.ts'

/** The usage log in `dataDir`. */
export function fileUsageLog(dataDir: string): UsageLog {
  const db = new Database(join(dataDir, 'usage.sqlite'), { create: true, strict: true })
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
  const addAll = db.transaction((buckets: readonly UsageBucket[]) => {
    for (const b of buckets) upsert.run({ ...b })
  })
  const columns = 'flag_id AS flagId, hour, variant, reason, count, last_at AS lastAt'
  const since = db.prepare(`SELECT ${columns} FROM usage WHERE hour >= $since`)
  const sinceOf = db.prepare(`SELECT ${columns} FROM usage WHERE hour >= $since AND flag_id = $flagId`)
  const prune = db.prepare('DELETE FROM usage WHERE hour < $before')
  return {
    async add(buckets) {
      if (buckets.length > 0) addAll(buckets)
    },
    async read(sinceHour, flagIds) {
      if (flagIds === undefined) return since.all({ since: sinceHour }) as UsageBucket[]
      return flagIds.flatMap((flagId) => sinceOf.all({ since: sinceHour, flagId }) as UsageBucket[])
    },
    async prune(beforeHour) {
      prune.run({ before: beforeHour })
    },
    close: () => db.close(),
  }
}
