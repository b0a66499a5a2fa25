/**
 * `flagd storage copy --to postgres://…` (docs/operations.md#replicas): moves a single-VM install onto PostgreSQL.
 * Everything in the data directory goes into an empty database in one transaction: users, sessions,
 * API tokens, flags (with their revisions), the audit log (with the flag ids that follow renames),
 * the signing secret (so sessions stay valid) and the webhook cursors (so nothing is delivered twice).
 * The data directory's lock is held throughout, so a running daemon makes the copy refuse, and a
 * database that already holds a flagd state is refused too: nothing is ever merged or overwritten.
 */

import { existsSync } from 'node:fs'
import { SQL } from 'bun'
import type { StoredAuditEntry } from '../domain/audit-entry.ts'
import type { Clock } from '../domain/clock.ts'
import { redactedUrl } from '../domain/redacted-url.ts'
import { AuditJournal } from './audit-journal.ts'
import { openJsonFileStore, stateFilePath } from './json-file-store.ts'
import { auditRow } from './postgres-audit-log.ts'
import { migrate } from './postgres-schema.ts'
import { loadOrCreateSecret } from './secret-file.ts'
import { TABLES, type Table, USAGE_TABLES } from './store.ts'
import { fileCursors } from './webhook-cursor-file.ts'

/** What was copied. */
export interface CopySummary {
  flags: number
  users: number
  sessions: number
  tokens: number
  auditEntries: number
  revision: number
}

/**
 * Copies `dataDir` into the empty database at `url` (see module comment); `environment`: the default
 * one (config `environment`), whose state the flags of a state file from before environments become.
 */
export async function copyToPostgres(dataDir: string, url: string, now: Clock, environment: string): Promise<CopySummary> {
  if (!existsSync(stateFilePath(dataDir)))
    throw new Error(`${dataDir} holds no flagd state (no flagd.json): point at the daemon's data directory with --data-dir`)
  const store = await openJsonFileStore({ dataDir, now, auditRetentionMs: 0, environment })
  const sql = new SQL({ url, max: 2, connectionTimeout: 10 })
  try {
    await migrate(sql)
    const snapshot = store.committed()
    const journal = await AuditJournal.open(dataDir, snapshot.revision)
    let audit: StoredAuditEntry[]
    try {
      audit = journal.readStored(journal.items)
    } finally {
      await journal.close()
    }
    const rows: { tbl: Table; id: string; body: unknown }[] = []
    for (const table of TABLES) {
      const map = table === 'flags' ? new Map([...snapshot.flags.values()].map((f) => [f.id, f])) : snapshot[table]
      for (const row of map.values()) {
        const body = (USAGE_TABLES as readonly string[]).includes(table)
          ? { ...row, lastUsedAt: store.lastUsed(table as 'sessions', row as never) }
          : row
        rows.push({ tbl: table, id: row.id, body })
      }
    }
    const secret = await loadOrCreateSecret(dataDir)
    const cursors = await fileCursors(dataDir).load()
    await sql.begin(async (q) => {
      const [state] = await q`SELECT revision FROM flagd_state WHERE id = 1 FOR UPDATE`
      const [{ n }] = await q`SELECT (SELECT count(*) FROM flagd_rows) + (SELECT count(*) FROM flagd_audit) AS n`
      if (Number(state.revision) > 0 || Number(n) > 0) {
        throw new Error(
          `${redactedUrl(url)} already holds a flagd state (revision ${state.revision}); copy only into an empty database, nothing was changed`,
        )
      }
      const revisions = Object.fromEntries(TABLES.map((t) => [t, snapshot.revisionOf(t)]))
      if (rows.length > 0)
        await q`INSERT INTO flagd_rows (tbl, id, body) SELECT r.tbl, r.id, r.body FROM jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb) AS r(tbl text, id text, body jsonb)`
      for (let i = 0; i < audit.length; i += 5000) {
        const page = audit.slice(i, i + 5000).map(auditRow)
        await q`INSERT INTO flagd_audit (id, at, actor_id, action, flag_id, names, revision, entry)
          SELECT r.id, r.at, r.actor_id, r.action, r.flag_id, r.names, r.revision, r.entry
          FROM jsonb_to_recordset(${JSON.stringify(page)}::text::jsonb) AS r(id bigint, at timestamptz, actor_id text, action text, flag_id text, names text[], revision bigint, entry jsonb)`
      }
      await q`UPDATE flagd_state SET revision = ${snapshot.revision}, revisions = ${JSON.stringify(revisions)}::text::jsonb WHERE id = 1`
      await q`INSERT INTO flagd_settings (key, value) VALUES ('jwt-secret', ${secret}) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`
      if (Object.keys(cursors).length > 0)
        await q`INSERT INTO flagd_settings (key, value) VALUES ('webhook-cursors', ${JSON.stringify(cursors)}) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`
    })
    return {
      flags: snapshot.flags.size,
      users: snapshot.users.size,
      sessions: snapshot.sessions.size,
      tokens: snapshot.tokens.size,
      auditEntries: audit.length,
      revision: snapshot.revision,
    }
  } finally {
    await sql.close().catch(() => {})
    await store.close()
  }
}
