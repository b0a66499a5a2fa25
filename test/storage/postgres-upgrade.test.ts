/**
 * The PostgreSQL schema's upgrade to version 6 (docs/environments.md#how-flags-are-stored): flag
 * rows of a version-5 database (those of the real version-5 state file fixture) get every
 * environment's state in `states`; the originals are kept in `flagd_rows_v5`; replicas starting
 * together upgrade once.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { SQL } from 'bun'
import { migrate, SCHEMA_VERSION } from '../../src/storage/postgres-schema.ts'
import { openPostgresStore } from '../../src/storage/postgres-store.ts'
import { systemClock } from '../../src/system-clock.ts'
import { fixturePath } from '../helpers/fixtures.ts'
import { findPostgresBin, type PostgresServer, startPostgres } from '../helpers/postgres.ts'
import { tempDir } from '../helpers/test-app.ts'

const bin = findPostgresBin()
let server: PostgresServer | undefined
const dirs: string[] = []

beforeAll(async () => {
  if (bin) server = await startPostgres(bin)
})
afterAll(async () => {
  await server?.destroy()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** A database as flagd of schema version 5 left it, holding the fixture's rows. */
async function version5Database(): Promise<{ url: string; v5: Record<string, Record<string, Record<string, unknown>>> }> {
  const url = await (server as PostgresServer).freshDatabase()
  const v5 = JSON.parse(readFileSync(fixturePath('state/v5-environments/flagd.json'), 'utf8'))
  const sql = new SQL({ url, max: 1 })
  try {
    await migrate(sql)
    const rows = (['flags', 'environments', 'segments', 'users'] as const).flatMap((tbl) =>
      Object.entries(v5[tbl] as Record<string, unknown>).map(([id, body]) => ({ tbl, id, body })),
    )
    await sql`INSERT INTO flagd_rows (tbl, id, body) SELECT r.tbl, r.id, r.body FROM jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb) AS r(tbl text, id text, body jsonb)`
    await sql`UPDATE flagd_state SET revision = ${v5.revision}, revisions = ${JSON.stringify(v5.revisions)}::text::jsonb WHERE id = 1`
    await sql`UPDATE flagd_schema SET version = 5 WHERE id = 1`
  } finally {
    await sql.close()
  }
  return { url, v5 }
}

test.skipIf(!bin)('two replicas opening a version-5 database together upgrade it once, keeping the original rows', async () => {
  const { url, v5 } = await version5Database()
  const open = () => {
    const dataDir = tempDir()
    dirs.push(dataDir)
    return openPostgresStore({ url, dataDir, now: systemClock, environment: 'production' })
  }
  const stores = await Promise.all([open(), open()])
  try {
    for (const store of stores) {
      const limit = store.committed().flags.get('web/limit')
      expect(limit?.states.production).toEqual({
        valueExists: true,
        value: 3,
        enabled: true,
        targeting: { if: [{ $ref: 'beta' }, 'high', 'low'] },
      })
      expect(limit?.states.staging).toMatchObject({ value: 7 })
      expect(limit?.servedRevisions).toEqual({ production: 2, staging: 3 })
      expect(limit).not.toHaveProperty('valueExists')
      for (const env of store.committed().environments.values()) expect(env).not.toHaveProperty('home')
    }
    const sql = stores[0]?.sql as SQL
    const [{ version }] = await sql`SELECT version FROM flagd_schema WHERE id = 1`
    expect(version).toBe(SCHEMA_VERSION)
    // the originals, once: exactly the version-5 rows of flags and environments
    const kept = await sql`SELECT tbl, id, body FROM flagd_rows_v5 ORDER BY tbl, id`
    const expected = (['environments', 'flags'] as const).flatMap((tbl) => Object.keys(v5[tbl] ?? {}).map((id) => [tbl, id]))
    expect(kept.map((r: { tbl: string; id: string }) => [r.tbl, r.id]).sort()).toEqual(expected.sort())
    for (const r of kept) expect(r.body).toEqual((v5[r.tbl] as Record<string, unknown>)[r.id])
  } finally {
    for (const store of stores) await store.close()
  }
  // opened again: nothing left to upgrade, the rows stay as they are
  const dataDir = tempDir()
  dirs.push(dataDir)
  const again = await openPostgresStore({ url, dataDir, now: systemClock, environment: 'production' })
  try {
    expect(again.committed().flags.get('web/banner')?.states.staging).toMatchObject({ value: 'hello' })
  } finally {
    await again.close()
  }
})
