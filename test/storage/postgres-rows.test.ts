/**
 * The PostgreSQL store's feed replay, piece by piece: commits made elsewhere are applied whole even
 * when they swap names; a feed that no longer reaches back (pruned) is reported so the replica
 * reloads every row; pruning keeps a day.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { systemPrincipal } from '../../src/domain/principal.ts'
import { emptyStateData, stateFromRows } from '../../src/storage/memory-state.ts'
import { applyCommits, commitsSince, loadState, pruneFeed } from '../../src/storage/postgres-rows.ts'
import { openPostgresStore } from '../../src/storage/postgres-store.ts'
import type { Commit, CommitMeta } from '../../src/storage/store.ts'
import { systemClock } from '../../src/system-clock.ts'
import { findPostgresBin, type PostgresServer, startPostgres } from '../helpers/postgres.ts'
import { sampleFlag } from '../helpers/sample-flag.ts'
import { tempDir } from '../helpers/test-app.ts'

const bin = findPostgresBin()
let server: PostgresServer | undefined
const meta: CommitMeta = { principal: systemPrincipal('cli'), source: 'cli', requestId: 'req-1' }
const dirs: string[] = []

beforeAll(async () => {
  if (bin) server = await startPostgres(bin)
})
afterAll(async () => {
  await server?.destroy()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

test("a commit that swaps two flags' names applies whole (no name is ever held twice)", () => {
  const x = { ...sampleFlag('x'), id: 'flg_1' }
  const y = { ...sampleFlag('y'), id: 'flg_2' }
  const base = stateFromRows(
    { flags: [x, y], users: [], sessions: [], tokens: [], segments: [], environments: [], changeRequests: [] },
    2,
    {
      flags: 2,
      users: 0,
      sessions: 0,
      tokens: 0,
      segments: 0,
      environments: 0,
      changeRequests: 0,
    },
  )
  const swap: Commit = {
    meta,
    at: '2026-11-22T10:00:00.000Z',
    changes: [
      { seq: 3, table: 'flags', id: 'flg_1', before: x, after: { ...x, name: 'y', revision: 2 } },
      { seq: 4, table: 'flags', id: 'flg_2', before: y, after: { ...y, name: 'x', revision: 2 } },
    ],
  }
  const after = applyCommits(base, [swap])
  expect(after.flagsByName.get('y')?.id).toBe('flg_1')
  expect(after.flagsByName.get('x')?.id).toBe('flg_2')
  expect([after.revision, after.revisions.flags]).toEqual([4, 4])
  expect(applyCommits(emptyStateData(), []).revision).toBe(0)
})

test.skipIf(!bin)("a feed pruned past a replica's revision is reported, so it reloads; pruning keeps a day", async () => {
  const url = await server!.freshDatabase()
  const dataDir = tempDir()
  dirs.push(dataDir)
  const store = await openPostgresStore({ now: systemClock, url, dataDir })
  try {
    for (const name of ['a', 'b', 'c']) await store.transact(meta, (tx) => tx.put('flags', sampleFlag(name)))
    const commits = await commitsSince(store.sql, 0, 3)
    expect(commits?.map((c) => c.changes.map((ch) => ch.seq))).toEqual([[1], [2], [3]])
    expect((await commitsSince(store.sql, 1, 3))?.length).toBe(2)

    await store.sql`UPDATE flagd_changes SET at = now() - interval '25 hours' WHERE seq = 1`
    await pruneFeed(store.sql)
    expect((await store.sql`SELECT seq FROM flagd_changes ORDER BY seq`).map((r: { seq: string }) => Number(r.seq))).toEqual([2, 3])
    expect(await commitsSince(store.sql, 0, 3)).toBeUndefined() // too far behind: reload
    expect((await commitsSince(store.sql, 1, 3))?.length).toBe(2) // just behind: replay
    const reloaded = await loadState(store.sql)
    expect([...reloaded.flagsByName.keys()].sort()).toEqual(['a', 'b', 'c'])
    expect(reloaded.revision).toBe(3)
  } finally {
    await store.close()
  }
})

test.skipIf(!bin)('a database written by a newer flagd is refused with a sentence; an older schema is upgraded in place', async () => {
  const url = await server!.freshDatabase()
  const dataDir = tempDir()
  dirs.push(dataDir)
  const first = await openPostgresStore({ now: systemClock, url, dataDir })
  await first.sql`UPDATE flagd_schema SET version = 1`
  await first.sql`DROP TABLE flagd_replicas`
  await first.close()
  const upgraded = await openPostgresStore({ now: systemClock, url, dataDir }) // schema 1 → current: the missing table is made
  expect((await upgraded.sql`SELECT version FROM flagd_schema`)[0].version).toBeGreaterThan(1)
  expect((await upgraded.sql`SELECT to_regclass('flagd_replicas') IS NOT NULL AS present`)[0].present).toBe(true)
  await upgraded.sql`UPDATE flagd_schema SET version = 99`
  await upgraded.close()
  await expect(openPostgresStore({ now: systemClock, url, dataDir })).rejects.toThrow('newer than this flagd understands')
})

/** A JSON value that counts how many times it is serialised (`toJSON` is not one of its fields). */
class Counted {
  static calls = 0
  readonly size = 'large'
  toJSON() {
    Counted.calls++
    return { size: this.size }
  }
}

test.skipIf(!bin)('a commit serialises a row once for its row and its feed entry, its audit entry once', async () => {
  const url = await server!.freshDatabase()
  const dataDir = tempDir()
  dirs.push(dataDir)
  const store = await openPostgresStore({ now: systemClock, url, dataDir })
  try {
    const row = { ...sampleFlag('counted'), type: 'OBJECT' as const, defaultValue: new Counted() as unknown as Record<string, unknown> }
    Counted.calls = 0
    await store.transact(meta, (tx) => tx.put('flags', row))
    expect(Counted.calls).toBe(2)
    const [stored] = await store.sql`SELECT body FROM flagd_rows WHERE tbl = 'flags' AND id = ${row.id}`
    const [fed] = await store.sql`SELECT after, meta FROM flagd_changes WHERE id = ${row.id}`
    expect(stored.body.defaultValue).toEqual({ size: 'large' })
    expect(fed.after.defaultValue).toEqual({ size: 'large' })
    expect(fed.meta.requestId).toBe('req-1')
  } finally {
    await store.close()
  }
})
