/**
 * The metrics guards read on PostgreSQL (docs/guarded-rollouts.md#the-applications-metrics): each
 * replica adds its counts to the shared guard log, and every replica's totals add up all of them
 * once read back; a database of schema version 6 gets the guard tables when a newer flagd opens it.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import { SQL } from 'bun'
import { createGuardMetrics, type GuardMetrics, type MetricPoint } from '../../src/services/guard-metrics.ts'
import { sharedGuardLog } from '../../src/storage/postgres-guard-log.ts'
import { migrate, SCHEMA_VERSION } from '../../src/storage/postgres-schema.ts'
import type { Store } from '../../src/storage/store.ts'
import { setGuardedRollout } from '../helpers/guarded-flag.ts'
import { replicaSuite } from '../helpers/postgres-replicas.ts'
import { START } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

setDefaultTimeout(60_000)
const at = START
const now = () => new Date(at)
const pg = replicaSuite(now)
const bin = pg.bin
const WRITTEN = START - 60_000

async function replica(url: string): Promise<{ store: Store & { sql: SQL }; metrics: GuardMetrics }> {
  const store = await pg.store(url)
  const metrics = createGuardMetrics({ store, log: sharedGuardLog(store.sql), now: () => at })
  pg.closeLater({ close: () => metrics.stop() })
  return { store, metrics }
}

const point = (over: Partial<MetricPoint>): MetricPoint => ({
  metric: 'app.errors',
  kind: 'sum',
  series: 's',
  flag: 'shop/checkout',
  variant: 'true',
  cumulative: false,
  start: '',
  time: '',
  value: 1,
  ...over,
})

test.skipIf(!bin)("two replicas' counts add up on both, sums and histograms", async () => {
  const url = await pg.database()
  const a = await replica(url)
  const b = await replica(url)
  const s = await pg.services(a.store)
  pg.closeLater({ close: () => s.guardMetrics.stop() })
  await s.environments.ensureDefault(SYSTEM)
  await s.flags.create(SYSTEM, { name: 'shop/checkout', type: 'BOOLEAN', value: false })
  await setGuardedRollout(a.store, 'shop/checkout', 'development', { writtenAt: new Date(WRITTEN).toISOString() })
  await b.store.refresh()
  const all = () => true
  const hist = { metric: 'app.latency', kind: 'histogram' as const, bounds: [1], buckets: [1, 1], count: 2, sum: 3 }
  a.metrics.ingest('a', 'development', [point({ value: 3 }), point(hist)], all)
  b.metrics.ingest('b', 'development', [point({ value: 4 }), point({ variant: 'false', value: 2 }), point(hist)], all)
  await a.metrics.flush()
  await b.metrics.flush()
  await a.metrics.refresh()
  for (const m of [a.metrics, b.metrics]) {
    expect(Object.fromEntries(m.totals('development', 'shop/checkout', 'app.errors', WRITTEN))).toEqual({
      true: { kind: 'sum', increase: 7 },
      false: { kind: 'sum', increase: 2 },
    })
    expect(m.totals('development', 'shop/checkout', 'app.latency', WRITTEN).get('true')).toEqual({
      kind: 'histogram',
      count: 4,
      sum: 6,
      bounds: [1],
      buckets: [2, 2],
    })
  }
  // and the window of a threshold check sees both replicas too
  expect(a.metrics.totals('development', 'shop/checkout', 'app.errors', at - 30_000).get('true')).toEqual({ kind: 'sum', increase: 7 })
})

test.skipIf(!bin)('a database of schema version 6 gets the guard tables', async () => {
  const url = await pg.database()
  const sql = new SQL(url)
  try {
    await migrate(sql)
    await sql`DROP TABLE flagd_guard_amounts`
    await sql`DROP TABLE flagd_guard_bounds`
    await sql`UPDATE flagd_schema SET version = 6 WHERE id = 1`
    await migrate(sql)
    const [{ version }] = await sql`SELECT version FROM flagd_schema WHERE id = 1`
    expect(version).toBe(SCHEMA_VERSION)
    const log = sharedGuardLog(sql)
    await log.add([{ env: 'e', flag: 'f', metric: 'm', variant: 'v', atMs: 10_000, slot: -1, value: 2 }], [])
    expect(await log.read('e', 'f', 'm', 0, 'all')).toEqual([{ variant: 'v', slot: -1, atMs: 0, value: 2 }])
  } finally {
    await sql.close()
  }
})
