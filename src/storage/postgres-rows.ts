/**
 * Moving state between PostgreSQL and memory for the PostgreSQL store: loading every row, reading
 * the change feed into commits, and writing a batch's rows, feed and audit entries. Each write is one
 * statement whatever the batch size (rows travel as one JSON array), so an import of thousands of
 * flags costs a few round trips, not thousands.
 */

import type { SQL } from 'bun'
import { auditEntriesOf } from '../domain/audit-entry.ts'
import { JsonTexts } from './json-texts.ts'
import { Draft, type StateData, stateFromRows } from './memory-state.ts'
import { auditRow } from './postgres-audit-log.ts'
import { type Change, type Commit, type CommitMeta, type Rows, TABLES, type Table } from './store.ts'

/** Every row and the revisions, as one consistent read. */
export async function loadState(sql: SQL): Promise<StateData> {
  return sql.begin('isolation level repeatable read read only', async (q) => {
    const [state] = await q`SELECT revision, revisions FROM flagd_state WHERE id = 1`
    const rows = await q`SELECT tbl, body FROM flagd_rows`
    const byTable = Object.fromEntries(TABLES.map((t) => [t, [] as unknown[]])) as { [T in Table]: Rows[T][] }
    for (const r of rows as { tbl: Table; body: never }[]) byTable[r.tbl]?.push(r.body)
    return stateFromRows(byTable, Number(state.revision), state.revisions)
  })
}

/** The store revision as committed in the database. */
export async function remoteRevision(q: SQL, forUpdate = false): Promise<number> {
  const [state] = forUpdate
    ? await q`SELECT revision FROM flagd_state WHERE id = 1 FOR UPDATE`
    : await q`SELECT revision FROM flagd_state WHERE id = 1`
  return Number(state.revision)
}

/**
 * The commits after revision `since`, oldest first; `undefined` when the feed no longer reaches back
 * that far (pruned), so the caller must reload everything.
 */
export async function commitsSince(q: SQL, since: number, upTo: number): Promise<Commit[] | undefined> {
  const rows =
    await q`SELECT seq, commit_seq, tbl, id, before, after, meta, at FROM flagd_changes WHERE seq > ${since} AND seq <= ${upTo} ORDER BY seq`
  if (rows.length === 0 || Number(rows[0].seq) !== since + 1 || Number(rows.at(-1).seq) !== upTo) return undefined
  const commits: Commit[] = []
  let open: { id: number; commit: Commit & { changes: Change[] } } | undefined
  for (const r of rows) {
    const commitId = Number(r.commit_seq)
    if (!open || open.id !== commitId) {
      open = { id: commitId, commit: { meta: r.meta as CommitMeta, changes: [], at: new Date(r.at).toISOString() } }
      commits.push(open.commit)
    }
    open.commit.changes.push({ seq: Number(r.seq), table: r.tbl, id: r.id, before: r.before ?? null, after: r.after ?? null } as Change)
  }
  return commits
}

/**
 * Applies commits made elsewhere to `base`. Within a commit, every changed row is removed before the
 * new versions go in, so renames that swap names within one commit never collide on the name index.
 */
export function applyCommits(base: StateData, commits: readonly Commit[]): StateData {
  const draft = new Draft(base)
  for (const commit of commits) {
    for (const c of commit.changes) draft.remove(c.table, c.id)
    for (const c of commit.changes) if (c.after) draft.set(c.table, c.after as never)
    for (const c of commit.changes) {
      draft.revision = c.seq
      draft.revisions[c.table] = c.seq
    }
  }
  return draft.seal()
}

/** One transaction of a batch, as written. */
export interface WrittenCommit {
  meta: CommitMeta
  changes: readonly Change[]
}

/** Writes a batch's rows, change feed and audit entries, and moves the revisions (inside `q`'s transaction). */
export async function writeCommits(q: SQL, commits: readonly WrittenCommit[], state: StateData, at: string): Promise<void> {
  const last = new Map<string, { tbl: Table; id: string; body: unknown }>()
  // each row's JSON is made once for its row and its feed entries, each commit's meta once for all
  // its feed entries (docs/performance.md#imports): the texts are the ones JSON.stringify would make
  const texts = new JsonTexts()
  const rowText = (row: unknown) => (row === null ? 'null' : texts.of(row as object))
  const feed: string[] = []
  const audit: unknown[] = []
  for (const { meta, changes } of commits) {
    const commitSeq = changes.at(-1)?.seq ?? 0
    const metaText = JSON.stringify(meta)
    for (const c of changes) {
      last.set(`${c.table}\u0000${c.id}`, { tbl: c.table, id: c.id, body: c.after })
      feed.push(
        `{"seq":${c.seq},"commit_seq":${commitSeq},"tbl":${JSON.stringify(c.table)},"id":${JSON.stringify(c.id)},"before":${rowText(c.before)},"after":${rowText(c.after)},"meta":${metaText}}`,
      )
    }
    for (const entry of auditEntriesOf(meta, at, changes)) audit.push(auditRow(entry))
  }
  // a row changed by several transactions of the batch is written once, as it ended
  const upserts = [...last.values()].filter((r) => r.body !== null)
  const deletes = [...last.values()].filter((r) => r.body === null).map(({ tbl, id }) => ({ tbl, id }))
  if (deletes.length > 0)
    await q`DELETE FROM flagd_rows WHERE (tbl, id) IN (SELECT r->>'tbl', r->>'id' FROM jsonb_array_elements(${JSON.stringify(deletes)}::text::jsonb) r)`
  if (upserts.length > 0) {
    const upserted = `[${upserts.map((r) => `{"tbl":${JSON.stringify(r.tbl)},"id":${JSON.stringify(r.id)},"body":${rowText(r.body)}}`).join(',')}]`
    await q`INSERT INTO flagd_rows (tbl, id, body)
      SELECT r.tbl, r.id, r.body FROM jsonb_to_recordset(${upserted}::text::jsonb) AS r(tbl text, id text, body jsonb)
      ON CONFLICT (tbl, id) DO UPDATE SET body = EXCLUDED.body`
  }
  if (feed.length > 0) {
    await q`INSERT INTO flagd_changes (seq, commit_seq, tbl, id, before, after, meta, at)
      SELECT r.seq, r.commit_seq, r.tbl, r.id, r.before, r.after, r.meta, ${at}::timestamptz
      FROM jsonb_to_recordset(${`[${feed.join(',')}]`}::text::jsonb) AS r(seq bigint, commit_seq bigint, tbl text, id text, before jsonb, after jsonb, meta jsonb)`
  }
  if (audit.length > 0) {
    await q`INSERT INTO flagd_audit (id, at, actor_id, action, flag_id, names, revision, entry)
      SELECT r.id, r.at, r.actor_id, r.action, r.flag_id, r.names, r.revision, r.entry
      FROM jsonb_to_recordset(${JSON.stringify(audit)}::text::jsonb) AS r(id bigint, at timestamptz, actor_id text, action text, flag_id text, names text[], revision bigint, entry jsonb)`
  }
  await q`UPDATE flagd_state SET revision = ${state.revision}, revisions = ${JSON.stringify(state.revisions)}::text::jsonb WHERE id = 1`
  await q`SELECT pg_notify('flagd_commits', ${String(state.revision)})`
}

/**
 * Writes last-use times (sessions, tokens) into their rows without a revision: a use is not a change.
 * An older time never replaces a newer one written by another replica.
 */
export async function writeUsage(q: SQL, uses: readonly { tbl: string; id: string; at: string }[]): Promise<void> {
  if (uses.length === 0) return
  await q`UPDATE flagd_rows AS r SET body = jsonb_set(r.body, '{lastUsedAt}', to_jsonb(u.at))
    FROM jsonb_to_recordset(${JSON.stringify(uses)}::text::jsonb) AS u(tbl text, id text, at text)
    WHERE r.tbl = u.tbl AND r.id = u.id AND (r.body->>'lastUsedAt' IS NULL OR r.body->>'lastUsedAt' < u.at)`
}

/**
 * Drops change-feed rows older than a day (any replica may; it is idempotent). A replica that was
 * away longer reloads every row instead of replaying the feed; its open streams then hear nothing of
 * what happened meanwhile (clients reconnecting with Last-Event-ID still catch up from the audit log).
 */
export async function pruneFeed(q: SQL): Promise<void> {
  await q`DELETE FROM flagd_changes WHERE at < now() - interval '1 day'`
}
