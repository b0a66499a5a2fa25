/**
 * The guard log of the file store (docs/guarded-rollouts.md#the-applications-metrics):
 * `<dataDir>/guard.sqlite`, through Bun's built-in SQLite, beside the usage log and for the same
 * reasons (docs/api.md#usage): metrics are telemetry, so adding 10 seconds of them is one small
 * transaction, durable with `synchronous = FULL`, and a `kill -9` loses only what was not added yet.
 * The database is opened when there is something to add, or to read from one an earlier run left.
 */

import { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { GuardAmount, GuardBounds, GuardLog } from './shared-tables.ts'

/** The guard log in `dataDir`. */
export function fileGuardLog(dataDir: string): GuardLog {
  const file = join(dataDir, 'guard.sqlite')
  let opened: ReturnType<typeof open> | undefined
  const db = () => (opened ??= open(file))
  // reads and pruning need no database where none was ever written
  const existing = () => opened ?? (existsSync(file) ? db() : undefined)
  return {
    shared: false,
    async add(amounts, bounds) {
      if (amounts.length > 0 || bounds.length > 0) db().addAll(amounts, bounds)
    },
    async read(env, flag, metric, sinceMs, slots, stepMs) {
      const found = existing()
      if (found === undefined) return []
      const rows = found.read.all({ env, flag, metric, since: sinceMs, step: stepMs ?? 0 }) as {
        variant: string
        slot: number
        atMs: number
        value: number
      }[]
      return slots === 'all' ? rows : rows.filter((r) => slots.includes(r.slot))
    },
    async bounds(env, flag, metric) {
      const row = existing()?.bounds.get({ env, flag, metric }) as { fromMs: number; bounds: string } | null | undefined
      return row ? { env, flag, metric, fromMs: row.fromMs, bounds: JSON.parse(row.bounds) as number[] } : undefined
    },
    async prune(beforeMs) {
      existing()?.prune.run({ before: beforeMs })
    },
    close: () => opened?.db.close(),
  }
}

/** Opens (creating when missing) the database and prepares the statements the log uses. */
function open(file: string) {
  const db = new Database(file, { create: true, strict: true })
  db.run('PRAGMA journal_mode = WAL')
  db.run('PRAGMA synchronous = FULL')
  db.run(`CREATE TABLE IF NOT EXISTS guard_amounts (
    env TEXT NOT NULL,
    flag TEXT NOT NULL,
    metric TEXT NOT NULL,
    at INTEGER NOT NULL,
    variant TEXT NOT NULL,
    slot INTEGER NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (env, flag, metric, at, variant, slot)
  ) WITHOUT ROWID`)
  db.run('CREATE INDEX IF NOT EXISTS guard_amounts_at ON guard_amounts (at)')
  db.run(`CREATE TABLE IF NOT EXISTS guard_bounds (
    env TEXT NOT NULL,
    flag TEXT NOT NULL,
    metric TEXT NOT NULL,
    from_ms INTEGER NOT NULL,
    bounds TEXT NOT NULL,
    PRIMARY KEY (env, flag, metric)
  ) WITHOUT ROWID`)
  const upsert = db.prepare(`INSERT INTO guard_amounts (env, flag, metric, at, variant, slot, value)
    VALUES ($env, $flag, $metric, $atMs, $variant, $slot, $value)
    ON CONFLICT (env, flag, metric, at, variant, slot) DO UPDATE SET value = value + excluded.value`)
  const record = db.prepare(`INSERT INTO guard_bounds (env, flag, metric, from_ms, bounds)
    VALUES ($env, $flag, $metric, $fromMs, $bounds)
    ON CONFLICT (env, flag, metric) DO UPDATE SET from_ms = excluded.from_ms, bounds = excluded.bounds
    WHERE excluded.from_ms > guard_bounds.from_ms`)
  return {
    db,
    addAll: db.transaction((amounts: readonly GuardAmount[], bounds: readonly GuardBounds[]) => {
      for (const b of bounds) record.run({ env: b.env, flag: b.flag, metric: b.metric, fromMs: b.fromMs, bounds: JSON.stringify(b.bounds) })
      for (const a of amounts) upsert.run({ ...a })
    }),
    // $step 0: summed over every step; else per step of that length
    read: db.prepare(`SELECT variant, slot, CASE WHEN $step = 0 THEN 0 ELSE at - at % $step END AS atMs, SUM(value) AS value
      FROM guard_amounts WHERE env = $env AND flag = $flag AND metric = $metric AND at >= $since
      GROUP BY variant, slot, atMs ORDER BY atMs`),
    bounds: db.prepare('SELECT from_ms AS fromMs, bounds FROM guard_bounds WHERE env = $env AND flag = $flag AND metric = $metric'),
    prune: db.prepare('DELETE FROM guard_amounts WHERE at < $before'),
  }
}
