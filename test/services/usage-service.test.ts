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
