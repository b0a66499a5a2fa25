/**
 * Memory that goes back (docs/performance.md#memory-that-goes-back): what a use case made for one
 * request is released once it has answered, so a large import or a large bulk answer does not stay
 * resident until the next one. Each test keeps only a weak reference to what it checks and waits
 * for the collector to report it gone (a full collection per look; conservative stack scanning may
 * need a few looks).
 */

import { heapStats } from 'bun:jsc'
import { expect, test } from 'bun:test'
import type { Flag } from '../../src/domain/flag.ts'
import type { UsageBucket } from '../../src/domain/flag-usage.ts'
import { type Principal, systemPrincipal } from '../../src/domain/principal.ts'
import { flagView } from '../../src/services/environment-views.ts'
import type { Services } from '../../src/services/services.ts'
import { UsageCounter } from '../../src/services/usage-counter.ts'
import { createUsageService } from '../../src/services/usage-service.ts'
import type { UsageLog } from '../../src/storage/shared-tables.ts'
import type { Store } from '../../src/storage/store.ts'
import { eventually } from '../helpers/eventually.ts'
import { sampleFlag } from '../helpers/sample-flag.ts'
import { tempServices, userCaller } from '../helpers/temp-services.ts'

const worlds = tempServices()
const admin = userCaller('usr_admin', ['flag:read', 'flag:write', 'flag:evaluate', 'migration:read', 'migration:write'])

/** A migration document of `n` INTEGER flags named `<prefix>/fI`. */
const documentOf = (n: number, prefix: string) => ({
  environment: 'test',
  version: '1.0.0',
  createdAt: '2026-12-01T09:00:00.000Z',
  flags: Object.fromEntries(
    Array.from({ length: n }, (_, i) => [`${prefix}/f${i}`, { type: 'INTEGER', defaultValue: 0, valueExists: true, value: i }]),
  ),
})

/** Resolves once `ref`'s object has been collected; fails the test when it never is. */
async function collected(ref: WeakRef<object>, what: string): Promise<void> {
  await eventually(
    () => {
      Bun.gc(true)
      return ref.deref() === undefined
    },
    { within: 3000, what: () => `${what} was never released` },
  )
}

/** Imports `n` flags under `prefix` and answers a weak reference to the import's result, which the caller has then dropped. */
async function importedResult(s: Services, n: number, prefix: string): Promise<WeakRef<object>> {
  const result = await s.migrations.importDocument(
    admin,
    documentOf(n, prefix),
    { mode: 'merge', values: 'overwrite', dryRun: false },
    'import-upload',
  )
  expect(result.summary.created).toBe(n)
  return new WeakRef(result)
}

test("an import's result (its list of changes) is released once answered, not kept until the next import", async () => {
  const { s } = await worlds.open()
  await importedResult(s, 1, 'first')
  const ref = await importedResult(s, 500, 'big')
  await collected(ref, 'the result of the last import')
})

/**
 * Counts a bulk template and single evaluations of two flags (one of them as environment `staging`
 * sees it) in `counter`, and answers weak references to the flag views, which nothing else holds.
 */
function countedFlags(counter: UsageCounter): WeakRef<object>[] {
  const a = flagView(sampleFlag('app/a'), 'development')
  const b = flagView({ ...sampleFlag('app/b'), states: { staging: { valueExists: false } } }, 'staging')
  counter.countTemplate({ fixed: [a, b].map((flag) => ({ flag, variant: 'value', reason: 'STATIC' })) })
  counter.count(a, 'value', 'TARGETING_MATCH')
  counter.countMany(b, 'value', 'STATIC', 3)
  return [new WeakRef(a), new WeakRef(b)]
}

test('pending usage counts hold no flag: a deleted revision is released before the next drain, and its counts stay', async () => {
  const counter = new UsageCounter(() => Date.parse('2026-12-01T09:30:00.000Z'), 'development')
  try {
    const refs = countedFlags(counter)
    for (const ref of refs) await collected(ref, 'a flag the usage counter counted')
    const counts = counter.drain().map((b) => [b.flagId, b.variant, b.reason, b.count])
    expect(counts.sort()).toEqual([
      ['flg_app_a', 'value', 'STATIC', 1],
      ['flg_app_a', 'value', 'TARGETING_MATCH', 1],
      ['flg_app_b@staging', 'value', 'STATIC', 4],
    ])
  } finally {
    counter.stop()
  }
})

/** How many live objects of JavaScriptCore's `kind` there are after a full collection. */
function liveCount(kind: string): number {
  Bun.gc(true)
  return (heapStats().objectTypeCounts as Record<string, number>)[kind] ?? 0
}

test('the views of rows seen by one environment cost no map per row; a second environment still gets its own views', () => {
  const rows = Array.from({ length: 1000 }, (_, i) => ({
    ...sampleFlag(`app/f${i}`),
    states: { development: { valueExists: false }, staging: { valueExists: false } },
  }))
  const before = liveCount('Map')
  const development = rows.map((row) => flagView(row, 'development'))
  expect(liveCount('Map') - before).toBeLessThan(10)
  // the same view again; another environment's is its own, and both are kept
  expect(rows.every((row, i) => flagView(row, 'development') === development[i])).toBe(true)
  const staging = rows.map((row) => flagView(row, 'staging'))
  expect(staging.every((view, i) => view !== development[i])).toBe(true)
  expect(rows.every((row, i) => flagView(row, 'staging') === staging[i] && flagView(row, 'development') === development[i])).toBe(true)
})

test("a served snapshot keeps its flags' answers in a map per kind of answer, not one per flag", async () => {
  const { s } = await worlds.open()
  await s.migrations.importDocument(admin, documentOf(1000, 'app'), { mode: 'merge', values: 'overwrite', dryRun: false }, 'import-upload')
  const reader: Principal = { kind: 'token', tokenId: 'tok_memory', name: 'app', permissions: ['flag:evaluate'], flagPrefixes: [] }
  s.evaluations.one(reader, 'app/f0', {})
  const before = liveCount('Map')
  // a bulk evaluation keeps every flag's answer in the snapshot (the same for every context)
  const answer = s.evaluations.bulk(reader, {}, () => false)
  expect(answer).toMatchObject({ flags: expect.stringContaining('"app/f999"') })
  expect(liveCount('Map') - before).toBeLessThan(10)
})

/** Reads one flag's usage through a log whose read answers a fresh list; answers a weak reference to that list. */
async function readUsage(usage: ReturnType<typeof createUsageService>, read: { last?: WeakRef<object> }): Promise<WeakRef<object>> {
  expect((await usage.flagUsage(systemPrincipal('cli'), 'f')).total).toBe(1000)
  return read.last as WeakRef<object>
}

test('the stored counts a usage read fetched are released once it has answered, not kept until the next write', async () => {
  const at = Date.parse('2026-12-01T09:00:00.000Z')
  const flag = { id: 'flg_1', name: 'f', updatedAt: '2026-12-01T08:00:00.000Z' } as Flag
  const store = { committed: () => ({ flags: new Map([['f', flag]]) }) } as unknown as Store
  const read: { last?: WeakRef<object> } = {}
  const log: UsageLog = {
    add: async () => {},
    async read() {
      const rows: UsageBucket[] = Array.from({ length: 1000 }, (_, i) => ({
        flagId: 'flg_1',
        hour: '2026-12-01T08',
        variant: `v${i}`,
        reason: 'STATIC',
        count: 1,
        lastAt: '2026-12-01T08:30:00.000Z',
      }))
      read.last = new WeakRef(rows[0] as UsageBucket)
      return rows
    },
    prune: async () => {},
    close() {},
  }
  const usage = createUsageService({
    store,
    log,
    counter: new UsageCounter(() => at, 'development'),
    environment: 'development',
    staleDays: 30,
    now: () => at,
  })
  try {
    await collected(await readUsage(usage, read), 'the counts of the last usage read')
  } finally {
    await usage.stop()
  }
})
