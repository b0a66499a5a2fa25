/**
 * The usage service's reads against its writes: a read made while counts are being written (a slow
 * database) sees each count exactly once, and a failed write keeps its counts for the next one.
 */

import { expect, test } from 'bun:test'
import type { Flag } from '../../src/domain/flag.ts'
import type { UsageBucket } from '../../src/domain/flag-usage.ts'
import { systemPrincipal } from '../../src/domain/principal.ts'
import { UsageCounter } from '../../src/services/usage-counter.ts'
import { createUsageService } from '../../src/services/usage-service.ts'
import type { UsageLog } from '../../src/storage/shared-tables.ts'
import type { Store } from '../../src/storage/store.ts'

const flag = { id: 'flg_1', name: 'f', updatedAt: new Date().toISOString() } as Flag
const store = { committed: () => ({ flags: new Map([['f', flag]]) }) } as unknown as Store

/** A log whose writes take `ms` and may be made to fail. */
function slowLog(ms: number) {
  const rows: UsageBucket[] = []
  const state = { fail: false }
  const log: UsageLog = {
    async add(buckets) {
      await Bun.sleep(ms)
      if (state.fail) throw new Error('database gone')
      rows.push(...buckets)
    },
    read: async () => rows.map((r) => ({ ...r })),
    prune: async () => {},
    close() {},
  }
  return { log, state }
}

test('a read during a slow write counts each evaluation once; a failed write keeps its counts', async () => {
  const { log, state } = slowLog(50)
  const counter = new UsageCounter(() => Date.parse('2026-12-01T00:00:00Z'), 'development')
  const errors: unknown[] = []
  const usage = createUsageService({
    store,
    log,
    counter,
    environment: 'development',
    staleDays: 30,
    now: () => Date.parse('2026-12-01T00:00:00Z'),
    onFlushError: (e) => errors.push(e),
  })
  const cli = systemPrincipal('cli')
  try {
    for (let i = 0; i < 4; i++) counter.count(flag, 'value', 'STATIC')
    const writing = usage.flush()
    await Bun.sleep(10) // the counts have left memory; the database has not got them yet
    expect((await usage.flagUsage(cli, 'f')).total).toBe(4)
    await writing
    expect((await usage.flagUsage(cli, 'f')).total).toBe(4)

    state.fail = true
    counter.count(flag, 'value', 'STATIC')
    await usage.flush()
    expect(errors).toHaveLength(1)
    expect((await usage.flagUsage(cli, 'f')).total).toBe(5) // kept in memory
    state.fail = false
    await usage.flush()
    expect((await usage.flagUsage(cli, 'f')).total).toBe(5)
  } finally {
    await usage.stop()
  }
})

test('the usage list counts since `since` (default 30 days); `stale` still looks at every kept day; a bad since changes nothing', async () => {
  const at = Date.parse('2026-12-01T12:00:00Z')
  const day = 86_400_000
  const bucket = (daysAgo: number, count: number) => {
    const when = new Date(at - daysAgo * day).toISOString()
    return { flagId: 'flg_1', hour: `${when.slice(0, 13)}:00:00.000Z`, variant: 'on', reason: 'STATIC', count, lastAt: when }
  }
  const rows: UsageBucket[] = [bucket(20, 5), bucket(2, 3)]
  const log: UsageLog = {
    add: async () => {},
    read: async (since) => rows.filter((r) => r.hour >= since),
    prune: async () => {},
    close() {},
  }
  const old = { ...flag, updatedAt: new Date(at - 60 * day).toISOString() } as Flag
  const oldStore = { committed: () => ({ flags: new Map([['f', old]]), environments: new Map() }) } as unknown as Store
  const usage = createUsageService({
    store: oldStore,
    log,
    counter: new UsageCounter(() => at, 'development'),
    environment: 'development',
    staleDays: 10,
    now: () => at,
  })
  const cli = systemPrincipal('cli')
  try {
    expect(await usage.list(cli)).toMatchObject([{ name: 'f', total: 8, stale: false }])
    const week = await usage.list(cli, undefined, new Date(at - 7 * day).toISOString())
    expect(week).toMatchObject([{ name: 'f', total: 3, lastEvaluatedAt: new Date(at - 2 * day).toISOString(), stale: false }])
    expect(await usage.list(cli, undefined, '2026-11-30')).toMatchObject([{ total: 0, lastEvaluatedAt: null, stale: false }])
    for (const bad of ['yesterday', '2026-02-31', '2026-11-27T10:00:00'])
      expect(usage.list(cli, undefined, bad)).rejects.toMatchObject({ details: { field: 'since' } })
  } finally {
    await usage.stop()
  }
})
