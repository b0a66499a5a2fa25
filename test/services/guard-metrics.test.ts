/**
 * The metrics guards read, at the service (docs/guarded-rollouts.md#the-applications-metrics): only
 * the points of a metric a guard names, of a visible flag's own variant, in the guard's environment
 * are kept; sums by their increase (cumulative) or as they come (delta), never twice; series that
 * began before the rollout was written count from their first value; histograms keep their bounds;
 * counts are durable, survive a restart, are pruned after 7 days, and memory stays bounded.
 */

import { afterEach, expect, test } from 'bun:test'
import { createGuardMetrics, type GuardMetrics, type MetricPoint } from '../../src/services/guard-metrics.ts'
import { GUARD_SERIES_BYTES } from '../../src/services/guard-series-memory.ts'
import { fileGuardLog } from '../../src/storage/file-guard-log.ts'
import type { GuardLog } from '../../src/storage/shared-tables.ts'
import { eventually } from '../helpers/eventually.ts'
import { setGuardedRollout } from '../helpers/guarded-flag.ts'
import { type ServiceWorld, START, tempServices } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const worlds = tempServices()
let open: { metrics: GuardMetrics; log: GuardLog }[] = []
afterEach(async () => {
  for (const o of open) {
    await o.metrics.stop()
    o.log.close()
  }
  open = []
})

const NS = 1_000_000n
/** `ms` as OTLP's nanosecond text. */
const ns = (ms: number) => (BigInt(ms) * NS).toString()
const WRITTEN = START - 60_000

function keeping(w: ServiceWorld) {
  const log = fileGuardLog(w.dir)
  const metrics = createGuardMetrics({ store: w.store, log, now: w.ms })
  open.push({ metrics, log })
  return metrics
}

async function world() {
  const w = await worlds.open()
  await w.s.flags.create(SYSTEM, { name: 'shop/checkout', type: 'BOOLEAN', value: false })
  await w.s.flags.create(SYSTEM, { name: 'shop/other', type: 'BOOLEAN', value: false })
  await setGuardedRollout(w.store, 'shop/checkout', 'development', { writtenAt: new Date(WRITTEN).toISOString() })
  return { w, metrics: keeping(w) }
}

const sum = (over: Partial<MetricPoint> = {}): MetricPoint => ({
  metric: 'app.errors',
  kind: 'sum',
  series: 's1',
  flag: 'shop/checkout',
  variant: 'true',
  cumulative: false,
  start: ns(WRITTEN + 1),
  time: ns(START),
  value: 1,
  ...over,
})
const hist = (over: Partial<MetricPoint> = {}): MetricPoint => ({
  metric: 'app.latency',
  kind: 'histogram',
  series: 'h1',
  flag: 'shop/checkout',
  variant: 'true',
  cumulative: false,
  start: ns(WRITTEN + 1),
  time: ns(START),
  count: 3,
  sum: 0.9,
  bounds: [0.1, 0.5],
  buckets: [1, 1, 1],
  ...over,
})
const all = () => true
const increases = (m: GuardMetrics, metric = 'app.errors', since = WRITTEN) =>
  Object.fromEntries([...m.totals('development', 'shop/checkout', metric, since)].map(([v, t]) => [v, t.kind === 'sum' ? t.increase : t]))

test('only points of a guarded metric, of a visible flag, of one of its variants, in its environment are kept', async () => {
  const { w, metrics } = await world()
  const moved = metrics.ingest(
    'r',
    'development',
    [
      sum({ metric: 'app.unguarded', value: 5 }),
      sum({ flag: 'shop/other', value: 5 }),
      sum({ flag: 'shop/nothing', value: 5 }),
      sum({ variant: 'made-up', value: 5 }),
      sum({ metric: 'app.latency', value: 5 }), // a histogram's name sent as a counter
      hist({ metric: 'app.errors' }), // and the other way round
    ],
    all,
  )
  expect(moved.size).toBe(0)
  expect(metrics.ingest('r', 'staging', [sum({ value: 5 })], all).size).toBe(0)
  expect(metrics.ingest('r', 'development', [sum({ value: 5 })], () => false).size).toBe(0)
  expect(metrics.stored().cells).toBe(0)
  await metrics.flush()
  // nothing was written: the log's database was never made
  expect(await Bun.file(`${w.dir}/guard.sqlite`).exists()).toBe(false)
  expect(increases(metrics)).toEqual({})

  expect([...metrics.ingest('r', 'development', [sum({ value: 2 }), sum({ variant: 'false', value: 3 })], all)]).toEqual(['shop/checkout'])
  expect(increases(metrics)).toEqual({ true: 2, false: 3 })
})

test('delta points count as they come; a cumulative series by its increase, never twice', async () => {
  const { metrics } = await world()
  metrics.ingest('r', 'development', [sum({ value: 2 }), sum({ value: 2 })], all)
  expect(increases(metrics)).toEqual({ true: 4 })
  const c = (value: number) => sum({ series: 'c', cumulative: true, value })
  metrics.ingest('r', 'development', [c(10)], all) // started after the write: counts whole
  metrics.ingest('r', 'development', [c(10)], all) // sent again: nothing
  metrics.ingest('r', 'development', [c(15)], all)
  expect(increases(metrics)).toEqual({ true: 4 + 15 })
  // another reporter's series of the same digest is its own series
  metrics.ingest('r2', 'development', [c(1)], all)
  expect(increases(metrics)).toEqual({ true: 20 })
  // a restart (a new start) counts whole from 0
  metrics.ingest('r', 'development', [sum({ series: 'c', cumulative: true, start: ns(START + 5), value: 3 })], all)
  expect(increases(metrics)).toEqual({ true: 23 })
})

test('a cumulative series that began before the rollout was written counts from its first value seen', async () => {
  const { metrics } = await world()
  const old = (value: number) => sum({ series: 'old', cumulative: true, start: ns(WRITTEN - 3_600_000), value })
  metrics.ingest('r', 'development', [old(1000)], all)
  expect(increases(metrics)).toEqual({})
  metrics.ingest('r', 'development', [old(1007)], all)
  expect(increases(metrics)).toEqual({ true: 7 })
})

test('without writtenAt a guard counts from the rollout start; a rollout written again starts afresh', async () => {
  const { w, metrics } = await world()
  await setGuardedRollout(w.store, 'shop/checkout', 'development', { start: new Date(START + 60_000).toISOString() })
  const c = (value: number) => sum({ series: 'c', cumulative: true, start: ns(START - 1), value })
  metrics.ingest('r', 'development', [sum({ value: 9 }), c(5)], all) // before the start: nothing counts
  expect(increases(metrics, 'app.errors', START + 60_000)).toEqual({})
  w.advance(120_000)
  metrics.ingest('r', 'development', [c(8)], all)
  expect(increases(metrics, 'app.errors', START + 60_000)).toEqual({ true: 3 })
  // written again (a second later, in the same 10-second step): the series' last value is a
  // baseline again, and earlier counts, even of that step, are not the guard's
  w.advance(1000)
  await setGuardedRollout(w.store, 'shop/checkout', 'development', { writtenAt: new Date(w.ms()).toISOString() })
  const written = w.ms()
  w.advance(1000)
  metrics.ingest('r', 'development', [c(10)], all)
  expect(increases(metrics, 'app.errors', written)).toEqual({})
  metrics.ingest('r', 'development', [c(11)], all)
  expect(increases(metrics, 'app.errors', written)).toEqual({ true: 1 })
  await metrics.flush()
  await metrics.refresh()
  expect(increases(metrics, 'app.errors', written)).toEqual({ true: 1 })
})

test('histograms keep count, sum and buckets; a point with other bounds than the first is refused', async () => {
  const { metrics } = await world()
  let rejected = 0
  const count = (n: number) => {
    rejected += n
  }
  metrics.ingest('r', 'development', [hist(), hist({ variant: 'false', count: 1, sum: 0.05, buckets: [1, 0, 0] })], all, count)
  metrics.ingest('r', 'development', [hist({ bounds: [0.2, 0.5] })], all, count)
  expect(rejected).toBe(1)
  const c = (count: number, buckets: number[]) => hist({ series: 'hc', cumulative: true, count, sum: count, buckets })
  metrics.ingest('r', 'development', [c(2, [2, 0, 0]), c(2, [2, 0, 0]), c(5, [2, 1, 2])], all)
  expect(increases(metrics, 'app.latency')).toEqual({
    true: { kind: 'histogram', count: 8, sum: 5.9, bounds: [0.1, 0.5], buckets: [3, 2, 3] },
    false: { kind: 'histogram', count: 1, sum: 0.05, bounds: [0.1, 0.5], buckets: [1, 0, 0] },
  })
})

test('counts are written, survive a restart and a sum keeps its steps for sliding windows', async () => {
  const { w, metrics } = await world()
  metrics.ingest('r', 'development', [sum({ value: 4 }), hist()], all)
  w.advance(60_000)
  metrics.ingest('r', 'development', [sum({ value: 6 })], all)
  expect(increases(metrics, 'app.errors', w.ms() - 30_000)).toEqual({ true: 6 })
  await metrics.stop()
  // a new process over the same directory reads them back
  const again = keeping(w)
  await again.refresh()
  expect(increases(again)).toEqual({ true: 10 })
  expect(increases(again, 'app.errors', w.ms() - 30_000)).toEqual({ true: 6 })
  expect(increases(again, 'app.latency')).toEqual({
    true: { kind: 'histogram', count: 3, sum: 0.9, bounds: [0.1, 0.5], buckets: [1, 1, 1] },
  })
  // a cumulative point counted before the restart is not counted twice by the flush after it
  again.ingest('r', 'development', [sum({ value: 1 })], all)
  await again.flush()
  await again.refresh()
  expect(increases(again)).toEqual({ true: 11 })
})

test('the impact series is read from the log in steps, with what is not written yet', async () => {
  const { w, metrics } = await world()
  metrics.ingest('r', 'development', [sum({ value: 4 }), sum({ variant: 'false', value: 1 }), hist()], all)
  await metrics.flush()
  w.advance(120_000)
  metrics.ingest('r', 'development', [sum({ value: 6 })], all)
  const series = await metrics.series('development', 'shop/checkout', 'app.errors', START - 60_000, 60)
  expect(series).toEqual({
    kind: 'sum',
    series: [
      { variant: 'false', points: [{ at: new Date(START).toISOString(), increase: 1 }] },
      {
        variant: 'true',
        points: [
          { at: new Date(START).toISOString(), increase: 4 },
          { at: new Date(START + 120_000).toISOString(), increase: 6 },
        ],
      },
    ],
  })
  expect(await metrics.series('development', 'shop/checkout', 'app.latency', START, 3600)).toEqual({
    kind: 'histogram',
    series: [{ variant: 'true', points: [{ at: new Date(START - (START % 3_600_000)).toISOString(), count: 3, sum: 0.9 }] }],
  })
  expect(await metrics.series('development', 'shop/checkout', 'app.unguarded', START, 60)).toBeUndefined()
})

test('counts older than 7 days are pruned', async () => {
  const { w, metrics } = await world()
  metrics.ingest('r', 'development', [sum({ value: 4 })], all)
  await metrics.flush()
  w.advance(8 * 86_400_000)
  await metrics.flush()
  expect(await metrics.series('development', 'shop/checkout', 'app.errors', START - 60_000, 60)).toEqual({ kind: 'sum', series: [] })
})

test('100,000 distinct cumulative series leave memory bounded by guards x variants', async () => {
  const { metrics } = await world()
  for (let batch = 0; batch < 100; batch++) {
    const points = Array.from({ length: 1000 }, (_, i) =>
      sum({ series: `series-${batch}-${i}-${'x'.repeat(40)}`, cumulative: true, value: 1, variant: i % 2 ? 'true' : 'false' }),
    )
    metrics.ingest('r', 'development', points, all)
  }
  const stored = metrics.stored()
  expect(stored.bytes).toBeLessThanOrEqual(GUARD_SERIES_BYTES)
  expect(stored.series).toBeLessThan(100_000)
  // one cell per variant of a guarded metric of a flag, whatever the number of series
  expect(stored.cells).toBe(2)
  expect(increases(metrics)).toEqual({ true: 50_000, false: 50_000 })
})

test('the timer writes without a clean stop: a process killed after it loses nothing', async () => {
  const { w } = await world()
  // the timer's period shortened: what is tested is that it writes, not how long 10 s is
  const log = fileGuardLog(w.dir)
  const metrics = createGuardMetrics({ store: w.store, log, now: w.ms, flushMs: 20 })
  open.push({ metrics, log })
  metrics.ingest('r', 'development', [sum({ value: 4 })], all)
  // another connection sees the counts once the timer wrote them (no flush, no stop)
  const reader = fileGuardLog(w.dir)
  open.push({ metrics: createGuardMetrics({ store: w.store, log: reader, now: w.ms }), log: reader })
  await eventually(async () => (await reader.read('development', 'shop/checkout', 'app.errors', WRITTEN, 'all')).length > 0, {
    every: 20,
    what: () => 'the guard log written by the timer',
  })
  // a new process over the directory (the first never stopped) reads them back
  const next = keeping(w)
  await next.refresh()
  expect(increases(next)).toEqual({ true: 4 })
})

test('a metric no guard names any more leaves nothing in memory after the next write', async () => {
  const { w, metrics } = await world()
  metrics.ingest('r', 'development', [sum({ value: 4 }), hist()], all)
  await metrics.flush()
  expect(metrics.stored().cells).toBe(2)
  await setGuardedRollout(w.store, 'shop/checkout', 'development', {
    writtenAt: new Date(w.ms()).toISOString(),
    guard: { checks: [{ kind: 'threshold', metric: 'app.other', max: 1, windowSeconds: 60 }] },
  })
  await metrics.flush()
  expect(metrics.stored().cells).toBe(0)
  expect(increases(metrics)).toEqual({})
})

test('a cumulative point that arrives late (an exporter retry of an older value) counts nothing and is not counted again', async () => {
  const { metrics } = await world()
  const c = (value: number) => sum({ series: 'c', cumulative: true, value })
  metrics.ingest('r', 'development', [c(100)], all) // started after the write: counts whole
  metrics.ingest('r', 'development', [c(150)], all)
  expect(increases(metrics)).toEqual({ true: 150 })
  // the retry of the first export lands after the second: the same start, a lower value
  metrics.ingest('r', 'development', [c(100)], all)
  expect(increases(metrics)).toEqual({ true: 150 })
  // and the series goes on from its highest value, never counting 100..150 twice
  metrics.ingest('r', 'development', [c(150)], all)
  metrics.ingest('r', 'development', [c(160)], all)
  expect(increases(metrics)).toEqual({ true: 160 })
  // a histogram's late point likewise
  const h = (count: number) => hist({ series: 'hc', cumulative: true, count, sum: count, buckets: [count, 0, 0] })
  metrics.ingest('r', 'development', [h(4)], all)
  metrics.ingest('r', 'development', [h(6)], all)
  metrics.ingest('r', 'development', [h(4)], all)
  metrics.ingest('r', 'development', [h(6)], all)
  const latency = metrics.totals('development', 'shop/checkout', 'app.latency', WRITTEN).get('true')
  expect(latency).toMatchObject({ kind: 'histogram', count: 6, sum: 6, buckets: [6, 0, 0] })
})

test('an archived flag serves nothing, so nothing its application reports while archived counts for its guard', async () => {
  const { w, metrics } = await world()
  metrics.ingest('r', 'development', [sum({ value: 2 })], all)
  await w.s.flags.archive(SYSTEM, 'shop/checkout')
  expect(metrics.ingest('r', 'development', [sum({ value: 50 })], all).size).toBe(0)
  await w.s.flags.restore(SYSTEM, 'shop/checkout')
  expect(increases(metrics)).toEqual({ true: 2 })
})
