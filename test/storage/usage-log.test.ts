/**
 * The usage log (docs/api.md#usage) on both backends: additions to one bucket add up (as every replica's
 * do), reads filter by hour and flag, old buckets are pruned; the file backend survives reopening.
 */

import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
import type { UsageBucket } from '../../src/domain/flag-usage.ts'
import { fileUsageLog } from '../../src/storage/file-usage-log.ts'
import { migrate } from '../../src/storage/postgres-schema.ts'
import { sharedUsage } from '../../src/storage/postgres-shared.ts'
import type { UsageLog } from '../../src/storage/shared-tables.ts'
import { findPostgresBin, type PostgresServer, startPostgres } from '../helpers/postgres.ts'

const bin = findPostgresBin()
let server: PostgresServer | undefined
const dirs: string[] = []
const closers: (() => unknown)[] = []
beforeAll(async () => {
  if (bin) server = await startPostgres(bin)
})
afterAll(async () => {
  for (const close of closers) await close()
  await server?.destroy()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const bucket = (flagId: string, hour: string, variant: string, count: number, lastAt: string): UsageBucket => ({
  flagId,
  hour,
  variant,
  reason: 'STATIC',
  count,
  lastAt,
})
const H5 = '2026-11-25T05:00:00.000Z'
const H6 = '2026-11-25T06:00:00.000Z'
const sorted = (b: UsageBucket[]) =>
  [...b].sort((x, y) => `${x.flagId}${x.hour}${x.variant}`.localeCompare(`${y.flagId}${y.hour}${y.variant}`))

function contract(name: string, open: () => Promise<UsageLog>) {
  describe(`usage log: ${name}`, () => {
    test('additions add up; reads by hour and flag; pruning', async () => {
      const log = await open()
      await log.add([bucket('f1', H5, 'on', 3, '2026-11-25T05:10:00.000Z'), bucket('f2', H5, 'off', 1, '2026-11-25T05:11:00.000Z')])
      // a second replica (or the next minute) adds to the same bucket
      await log.add([bucket('f1', H5, 'on', 2, '2026-11-25T05:05:00.000Z'), bucket('f1', H6, 'on', 4, '2026-11-25T06:01:00.000Z')])
      expect(sorted(await log.read(H5))).toEqual([
        bucket('f1', H5, 'on', 5, '2026-11-25T05:10:00.000Z'),
        bucket('f1', H6, 'on', 4, '2026-11-25T06:01:00.000Z'),
        bucket('f2', H5, 'off', 1, '2026-11-25T05:11:00.000Z'),
      ])
      expect(sorted(await log.read(H6))).toEqual([bucket('f1', H6, 'on', 4, '2026-11-25T06:01:00.000Z')])
      expect(sorted(await log.read(H5, ['f2']))).toEqual([bucket('f2', H5, 'off', 1, '2026-11-25T05:11:00.000Z')])
      await log.prune(H6)
      expect(sorted(await log.read('2026-11-01T00:00:00.000Z'))).toEqual([bucket('f1', H6, 'on', 4, '2026-11-25T06:01:00.000Z')])
      await log.add([])
    })
  })
}

contract('SQLite file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'flagd-usage-'))
  dirs.push(dir)
  const log = fileUsageLog(dir)
  closers.push(() => log.close())
  return log
})

test('the file log keeps what was added across reopening', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'flagd-usage-'))
  dirs.push(dir)
  const first = fileUsageLog(dir)
  await first.add([bucket('f1', H5, 'on', 7, '2026-11-25T05:10:00.000Z')])
  first.close()
  const second = fileUsageLog(dir)
  closers.push(() => second.close())
  expect(await second.read(H5)).toEqual([bucket('f1', H5, 'on', 7, '2026-11-25T05:10:00.000Z')])
})

if (bin)
  contract('PostgreSQL', async () => {
    const sql = new SQL(await (server as PostgresServer).freshDatabase())
    closers.push(() => sql.close())
    await migrate(sql)
    return sharedUsage(sql)
  })

test('the file log opens its database only to add counts, or for one an earlier run left', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'flagd-usage-'))
  dirs.push(dir)
  const log = fileUsageLog(dir)
  closers.push(() => log.close())
  // what an idle daemon does: a minute without counts, the hourly pruning, a read of the usage page
  await log.add([])
  await log.prune(H6)
  expect(await log.read(H5)).toEqual([])
  expect(existsSync(join(dir, 'usage.sqlite'))).toBe(false)
  await log.add([bucket('f1', H5, 'on', 1, '2026-11-25T05:10:00.000Z')])
  expect(existsSync(join(dir, 'usage.sqlite'))).toBe(true)
  log.close()
  // a later run finds it, reads and prunes it without adding first
  const again = fileUsageLog(dir)
  closers.push(() => again.close())
  expect(await again.read(H5)).toEqual([bucket('f1', H5, 'on', 1, '2026-11-25T05:10:00.000Z')])
  await again.prune(H6)
  expect(await again.read(H5)).toEqual([])
})
