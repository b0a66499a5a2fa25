/**
 * The PostgreSQL store's tables (docs/operations.md#replicas), created and upgraded at start under an advisory lock
 * so that replicas starting together do it once.
 *
 * - `flagd_state`: one row holding the store revision and per-table revisions. Every write locks it
 *   first (`FOR UPDATE`), which serialises writers across replicas and makes `If-Match` a
 *   compare-and-swap on committed state.
 * - `flagd_rows`: every row of every table as JSON, keyed by (table, id).
 * - `flagd_changes`: the change feed, one row per changed row with the commit's metadata; replicas
 *   catch up from it after a notification (or the poll), and streams on any replica see changes made
 *   on any other. Old feed rows are pruned; a replica further behind reloads `flagd_rows`.
 * - `flagd_audit`: the audit log (docs/api.md#audit-log), written in the same transaction as the change.
 * - `flagd_settings`: the token-signing secret and other shared values.
 * - `flagd_login_failures`: login throttling counts shared by every replica.
 * - `flagd_replicas`: live replicas and the revision each has applied (revocations wait for them).
 * - `flagd_usage`: flag usage counts in hourly buckets (docs/api.md#usage); every replica adds to them.
 * - `flagd_guard_amounts`, `flagd_guard_bounds`: the application metrics guards read, in 10-second
 *   steps (docs/guarded-rollouts.md#the-applications-metrics); every replica adds to them (version 7).
 * Every statement is idempotent, so an older schema is upgraded by running them all again. Version 6
 * stores every environment's state of a flag alike (docs/environments.md#how-flags-are-stored): its
 * upgrade rewrites the flag and environment rows of `flagd_rows`, keeping the originals in
 * `flagd_rows_v5`.
 */

import type { SQL } from 'bun'
import { DEFAULT_ENVIRONMENT } from '../domain/environment.ts'
import { homeOfOldRows, upgradeEnvironmentRow, upgradeFlagRow } from './flag-row-upgrade.ts'

/** The schema version this code writes. */
export const SCHEMA_VERSION = 7

/** The advisory lock key of schema changes (any constant; "flagd" in ASCII). */
const SCHEMA_LOCK = 0x666c616764

const TABLES = `
CREATE TABLE IF NOT EXISTS flagd_state (
  id smallint PRIMARY KEY CHECK (id = 1),
  revision bigint NOT NULL,
  revisions jsonb NOT NULL
);
INSERT INTO flagd_state (id, revision, revisions)
  VALUES (1, 0, '{"flags":0,"users":0,"sessions":0,"tokens":0}') ON CONFLICT (id) DO NOTHING;
CREATE TABLE IF NOT EXISTS flagd_rows (
  tbl text NOT NULL,
  id text NOT NULL,
  body jsonb NOT NULL,
  PRIMARY KEY (tbl, id)
);
CREATE TABLE IF NOT EXISTS flagd_changes (
  seq bigint PRIMARY KEY,
  commit_seq bigint NOT NULL,
  tbl text NOT NULL,
  id text NOT NULL,
  before jsonb,
  after jsonb,
  meta jsonb NOT NULL,
  at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS flagd_audit (
  id bigint PRIMARY KEY,
  at timestamptz NOT NULL,
  actor_id text NOT NULL,
  action text NOT NULL,
  flag_id text,
  names text[] NOT NULL,
  revision bigint,
  entry jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS flagd_audit_flag ON flagd_audit (flag_id, id);
CREATE INDEX IF NOT EXISTS flagd_audit_at ON flagd_audit (at);
CREATE TABLE IF NOT EXISTS flagd_settings (
  key text PRIMARY KEY,
  value text NOT NULL
);
CREATE TABLE IF NOT EXISTS flagd_login_failures (
  key text NOT NULL,
  at_ms bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS flagd_login_failures_key ON flagd_login_failures (key, at_ms);
CREATE TABLE IF NOT EXISTS flagd_replicas (
  id text PRIMARY KEY,
  revision bigint NOT NULL,
  seen_at timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS flagd_usage (
  flag_id text NOT NULL,
  hour timestamptz NOT NULL,
  variant text NOT NULL,
  reason text NOT NULL,
  count bigint NOT NULL,
  last_at timestamptz NOT NULL,
  PRIMARY KEY (flag_id, hour, variant, reason)
);
CREATE INDEX IF NOT EXISTS flagd_usage_hour ON flagd_usage (hour);
CREATE TABLE IF NOT EXISTS flagd_guard_amounts (
  env text NOT NULL,
  flag text NOT NULL,
  metric text NOT NULL,
  at bigint NOT NULL,
  variant text NOT NULL,
  slot smallint NOT NULL,
  value double precision NOT NULL,
  PRIMARY KEY (env, flag, metric, at, variant, slot)
);
CREATE INDEX IF NOT EXISTS flagd_guard_amounts_at ON flagd_guard_amounts (at);
CREATE TABLE IF NOT EXISTS flagd_guard_bounds (
  env text NOT NULL,
  flag text NOT NULL,
  metric text NOT NULL,
  from_ms bigint NOT NULL,
  bounds jsonb NOT NULL,
  PRIMARY KEY (env, flag, metric)
);
CREATE TABLE IF NOT EXISTS flagd_schema (
  id smallint PRIMARY KEY CHECK (id = 1),
  version integer NOT NULL
);
`

/**
 * Rewrites the flag rows of a database from before version 6 (see module comment), inside the
 * schema transaction; the originals are kept in `flagd_rows_v5` (made once: a second run finds the
 * rows upgraded and the backup there).
 */
async function upgradeRows(tx: SQL, environment: string): Promise<void> {
  const [any] = await tx`SELECT 1 AS one FROM flagd_rows WHERE tbl IN ('flags', 'environments') LIMIT 1`
  if (any === undefined) return
  await tx`CREATE TABLE IF NOT EXISTS flagd_rows_v5 AS SELECT * FROM flagd_rows WHERE tbl IN ('flags', 'environments')`
  const envs = await tx`SELECT id, body FROM flagd_rows WHERE tbl = 'environments'`
  const home = homeOfOldRows(
    envs.map((r: { body: unknown }) => r.body),
    environment,
  )
  const rows: { tbl: string; id: string; body: unknown }[] = []
  for (const r of envs) rows.push({ tbl: 'environments', id: r.id, body: upgradeEnvironmentRow(r.body) })
  for (const r of await tx`SELECT id, body FROM flagd_rows WHERE tbl = 'flags'`)
    rows.push({ tbl: 'flags', id: r.id, body: upgradeFlagRow(r.body, home) })
  await tx`UPDATE flagd_rows SET body = r.body FROM jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb) AS r(tbl text, id text, body jsonb)
    WHERE flagd_rows.tbl = r.tbl AND flagd_rows.id = r.id`
}

/**
 * Creates or upgrades the tables; throws when the database was written by a newer flagd. Safe when
 * several replicas start at once: they take the same advisory lock in turn. `environment`: the
 * default one (config `environment`), whose state flags stored before environments get.
 */
export async function migrate(sql: SQL, environment = DEFAULT_ENVIRONMENT): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${SCHEMA_LOCK})`
    const [exists] = await tx`SELECT to_regclass('flagd_schema') IS NOT NULL AS present`
    let version = 0
    if (exists.present) {
      const [row] = await tx`SELECT version FROM flagd_schema WHERE id = 1`
      version = row?.version ?? 0
      if (row && row.version > SCHEMA_VERSION) {
        throw new Error(
          `the database holds flagd schema version ${row.version}, newer than this flagd understands (${SCHEMA_VERSION}): run a newer flagd`,
        )
      }
      if (row && row.version === SCHEMA_VERSION) return
    }
    await tx.unsafe(TABLES)
    // rows are rewritten once, from a version before 6; later versions only add tables
    if (version < 6) await upgradeRows(tx, environment)
    await tx`INSERT INTO flagd_schema (id, version) VALUES (1, ${SCHEMA_VERSION}) ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version`
  })
}
