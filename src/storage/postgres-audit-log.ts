/**
 * `AuditLog` over the `flagd_audit` table (docs/api.md#audit-log, docs/operations.md#replicas): the same filters as the file store's
 * journal, run by the database. Entries are inserted by the PostgreSQL store in the transaction of
 * the change they record (`auditRows`).
 */

import type { SQL } from 'bun'
import type { AuditEntry, StoredAuditEntry } from '../domain/audit-entry.ts'
import type { AuditLog, AuditPage, AuditQuery } from './store.ts'

/** The column values of one entry, for the store's insert. */
export function auditRow(stored: StoredAuditEntry) {
  const e = stored.entry
  const names = [e.target.name, e.before?.name].filter((n): n is string => typeof n === 'string')
  return {
    id: e.id,
    at: e.at,
    actor_id: e.actor.id,
    action: e.action,
    flag_id: stored.flagId ?? null,
    names,
    revision: e.revision ?? null,
    entry: e,
  }
}

/** The audit log in `sql`'s database, hiding entries older than `retentionMs()` (0: keep all). */
export function postgresAuditLog(sql: SQL, retentionMs: () => number, now: () => number): AuditLog {
  const floor = () => (retentionMs() > 0 ? new Date(now() - retentionMs()).toISOString() : null)
  return {
    async query(q: AuditQuery): Promise<AuditPage> {
      const where: string[] = []
      const params: unknown[] = []
      const add = (clause: (p: string) => string, value: unknown) => {
        params.push(value)
        where.push(clause(`$${params.length}`))
      }
      const floorAt = floor()
      if (floorAt) add((p) => `at >= ${p}::timestamptz`, floorAt)
      if (q.flagIds) add((p) => `flag_id = ANY(${p}::text[])`, [...q.flagIds])
      if (q.name !== undefined) add((p) => `action LIKE 'flag.%' AND ${p} = ANY(names)`, q.name)
      if (q.actorId !== undefined) add((p) => `actor_id = ${p}`, q.actorId)
      if (q.environment !== undefined) add((p) => `entry->>'environment' = ${p}`, q.environment)
      if (typeof q.actionPrefix === 'string') add((p) => `starts_with(action, ${p})`, q.actionPrefix)
      else if (q.actionPrefix !== undefined)
        add((p) => `EXISTS (SELECT 1 FROM unnest(${p}::text[]) AS prefix WHERE starts_with(action, prefix))`, [...q.actionPrefix])
      if (q.sinceMs !== undefined) add((p) => `at >= ${p}::timestamptz`, new Date(q.sinceMs).toISOString())
      if (q.untilMs !== undefined) add((p) => `at <= ${p}::timestamptz`, new Date(q.untilMs).toISOString())
      if (q.beforeId !== undefined) add((p) => `id < ${p}`, q.beforeId)
      if (q.afterId !== undefined) add((p) => `id > ${p}`, q.afterId)
      params.push(q.limit)
      const order = q.afterId !== undefined ? 'ASC' : 'DESC'
      let text = `SELECT entry FROM flagd_audit ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id ${order} LIMIT $${params.length}`
      if (q.maxBytes !== undefined) {
        // the page stops before the entry that would pass maxBytes (the first always comes), counted
        // in the database so that what is not sent is never held here
        params.push(q.maxBytes)
        text = `WITH page AS (
          SELECT entry, id, row_number() OVER w AS n, sum(octet_length(entry::text)) OVER w AS running
          FROM flagd_audit ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
          WINDOW w AS (ORDER BY id ${order} ROWS UNBOUNDED PRECEDING)
          ORDER BY id ${order} LIMIT $${params.length - 1}
        )
        SELECT entry, EXISTS (SELECT 1 FROM page WHERE n > 1 AND running > $${params.length}) AS truncated
        FROM page WHERE n = 1 OR running <= $${params.length} ORDER BY id ${order}`
      }
      const rows = await sql.unsafe(text, params)
      if (q.maxBytes !== undefined)
        return Object.assign(
          rows.map((r: { entry: AuditEntry }) => r.entry),
          { truncated: rows[0]?.truncated === true },
        )
      return rows.map((r: { entry: AuditEntry }) => r.entry)
    },

    async flagRevision(flagId: string, revision: number): Promise<AuditEntry | undefined> {
      const floorAt = floor() ?? '-infinity'
      const [row] = await sql`
        SELECT entry FROM flagd_audit
        WHERE flag_id = ${flagId} AND revision = ${revision} AND action <> 'flag.deleted' AND at >= ${floorAt}::timestamptz
        ORDER BY id DESC LIMIT 1`
      return row?.entry
    },

    async prune(cutoffMs: number): Promise<number> {
      const result = await sql`DELETE FROM flagd_audit WHERE at < ${new Date(cutoffMs).toISOString()}::timestamptz`
      return result.count ?? 0
    },
  }
}
