/**
 * The watcher of guarded rollouts (docs/guarded-rollouts.md#when-a-guard-trips) over a file store:
 * a running rollout whose check trips asks for one halt with the evidence; a pending, completed or
 * halted one never; the report of `GET /api/flags/{name}/rollout` reads the same as the watcher
 * decides, and shows a halted rollout's evidence; a reader outside the flag or the environment gets
 * a 404 or 403. Metrics and the halt are stand-ins here (their own tests are beside them).
 */

import { expect, test } from 'bun:test'
import type { FlagRow } from '../../src/domain/flag-row.ts'
import type { VariantTotals } from '../../src/domain/guard-reading.ts'
import { systemPrincipal } from '../../src/domain/principal.ts'
import type { Rollout } from '../../src/domain/rollout.ts'
import type { Guard } from '../../src/domain/rollout-guard.ts'
import { createGuardWatcher, type HaltRequest } from '../../src/services/guard-watcher.ts'
import { haltRollout } from '../../src/services/rollout-halt.ts'
import type { Store } from '../../src/storage/store.ts'
import { eventually } from '../helpers/eventually.ts'
import { sampleEnvironment } from '../helpers/sample-environment.ts'
import { tempFileStores } from '../helpers/temp-store.ts'

const stores = tempFileStores()
const meta = { principal: systemPrincipal('cli'), source: 'cli' as const, requestId: 'req-1' }
const NOW = Date.parse('2026-12-07T12:00:00.000Z')
const GUARD: Guard = { checks: [{ kind: 'error-rate', errors: 'errors', total: 'requests' }], minSamples: 100 }

function rollout(extra: Partial<Rollout> = {}): Rollout {
  return {
    variant: 'on',
    start: new Date(NOW - 3_600_000).toISOString(),
    end: new Date(NOW + 3_600_000).toISOString(),
    fromPercent: 0,
    toPercent: 100,
    guard: GUARD,
    writtenAt: new Date(NOW - 3_600_000).toISOString(),
    ...extra,
  }
}

function flagRow(name: string, r: Rollout | undefined, env = 'production'): FlagRow {
  return {
    id: `flg_${name}`,
    name,
    type: 'BOOLEAN',
    description: '',
    defaultValue: false,
    states: { [env]: { valueExists: true, value: false, ...(r ? { rollout: r } : {}) } },
    createdAt: '2026-12-01T00:00:00.000Z',
    updatedAt: '2026-12-01T00:00:00.000Z',
    revision: 1,
  }
}

async function storeWith(...rows: FlagRow[]): Promise<Store> {
  const store = await stores.open(() => new Date(NOW))
  await store.transact(meta, (tx) => {
    tx.put('environments', sampleEnvironment('production', { default: true }))
    tx.put('environments', sampleEnvironment('staging'))
    for (const row of rows) tx.put('flags', row)
  })
  return store
}

const sum = (increase: number): VariantTotals => ({ kind: 'sum', increase })
/** Treatment with 10 % errors against 1 % in control: a clear regression. */
const regressed = (metric: string): Map<string, VariantTotals> =>
  new Map(
    metric === 'errors'
      ? [
          ['on', sum(100)],
          ['off', sum(10)],
        ]
      : [
          ['on', sum(1000)],
          ['off', sum(1000)],
        ],
  )

function watcherOn(store: Store, totals = regressed) {
  const halts: HaltRequest[] = []
  const asked: { env: string; flag: string; since: number }[] = []
  const watcher = createGuardWatcher({
    store,
    now: () => new Date(NOW),
    environment: 'production',
    metrics: {
      totals: (env, flag, metric, since) => {
        asked.push({ env, flag, since })
        return totals(metric)
      },
    },
    halt: async (request) => {
      halts.push(request)
      return 'halted'
    },
  })
  return { watcher, halts, asked }
}

test('a running rollout whose check trips asks for one halt, with the evidence and the rollout it saw', async () => {
  const store = await storeWith(flagRow('checkout', rollout()))
  const { watcher, halts, asked } = watcherOn(store)
  await watcher.reported('production', ['checkout'])
  expect(halts).toHaveLength(1)
  expect(halts[0]).toMatchObject({
    env: 'production',
    flag: 'checkout',
    // the watcher asks for the halt of the very rollout it read
    writtenAt: rollout().writtenAt,
    action: 'rollback',
    evidence: { check: 0, kind: 'error-rate', treatment: { total: 1000, errors: 100 }, control: { total: 1000, errors: 10 } },
  })
  expect(halts[0]?.evidence.difference?.lower).toBeGreaterThan(0)
  expect(new Set(asked.map((a) => a.since))).toEqual(new Set([NOW - 3_600_000]))
})

test('checkAll finds every guarded rollout in every environment; the action is the guard’s', async () => {
  const store = await storeWith(
    flagRow('a', rollout({ guard: { ...GUARD, action: 'pause' } })),
    flagRow('b', rollout(), 'staging'),
    flagRow('unguarded', rollout({ guard: undefined })),
    flagRow('none', undefined),
  )
  const { watcher, halts } = watcherOn(store)
  await watcher.checkAll()
  expect(halts.map((h) => [h.env, h.flag, h.action]).sort()).toEqual([
    ['production', 'a', 'pause'],
    ['staging', 'b', 'rollback'],
  ])
})

test('a pending, completed or already halted rollout is never halted, though it is read', async () => {
  const store = await storeWith(
    flagRow('pending', rollout({ start: new Date(NOW + 60_000).toISOString(), end: new Date(NOW + 120_000).toISOString() })),
    flagRow('completed', rollout({ end: new Date(NOW - 1000).toISOString() })),
  )
  const { watcher, halts } = watcherOn(store)
  await watcher.checkAll()
  await watcher.reported('production', ['pending', 'completed', 'missing'])
  await watcher.reported('nowhere', ['pending'])
  expect(halts).toEqual([])
  const report = watcher.report(systemPrincipal('cli'), 'completed')
  expect(report.status).toBe('completed')
  expect(report.guard?.checks[0]?.state).toBe('healthy')
})

test('the report: status, percent, the rollout as written, and each check as the watcher reads it', async () => {
  const store = await storeWith(flagRow('checkout', rollout()))
  const { watcher } = watcherOn(
    store,
    (metric) =>
      new Map(
        metric === 'errors'
          ? [['on', sum(1)]]
          : [
              ['on', sum(40)],
              ['off', sum(900)],
            ],
      ),
  )
  const report = watcher.report(systemPrincipal('cli'), 'checkout')
  expect(report.status).toBe('running')
  expect(report.percent).toBe(50)
  expect(report.rollout).toEqual({ ...rollout({ writtenAt: undefined }), status: 'running', percent: 50 })
  expect(report.rollout).not.toHaveProperty('writtenAt')
  expect(report.guard).toEqual({
    checks: [
      {
        kind: 'error-rate',
        state: 'collecting',
        treatment: { total: 40, errors: 1, rate: 0.025 },
        control: { total: 900, errors: 0, rate: 0 },
        difference: null,
      },
    ],
    checkedAt: new Date(NOW).toISOString(),
    trippedAt: null,
  })
})

test('a halted rollout reports its status, its share and the evidence it tripped on; the watcher leaves it', async () => {
  const at = new Date(NOW - 60_000).toISOString()
  const evidence = {
    check: 0,
    kind: 'error-rate' as const,
    treatment: { total: 500, errors: 60, rate: 0.12 },
    control: { total: 500, errors: 5, rate: 0.01 },
    difference: { estimate: 0.11, lower: 0.05, upper: 0.17 },
  }
  const store = await storeWith(flagRow('rolled', rollout()), flagRow('paused', rollout()))
  const writtenAt = rollout().writtenAt as string
  const haltAt = (when: number) => ({ store, now: () => new Date(when) })
  for (const [flag, action] of [
    ['rolled', 'rollback'],
    ['paused', 'pause'],
  ] as const)
    expect(await haltRollout(haltAt(Date.parse(at)), { env: 'production', flag, writtenAt, action, evidence })).toBe('halted')
  const { watcher, halts } = watcherOn(store)
  await watcher.checkAll()
  expect(halts).toEqual([])
  const rolled = watcher.report(systemPrincipal('cli'), 'rolled')
  expect([rolled.status, rolled.percent]).toEqual(['rolled-back', 0])
  expect(rolled.guard).toEqual({
    checks: [
      { kind: 'error-rate', state: 'tripped', treatment: evidence.treatment, control: evidence.control, difference: evidence.difference },
    ],
    checkedAt: at,
    trippedAt: at,
  })
  expect(rolled.rollout).not.toHaveProperty('halted')
  const paused = watcher.report(systemPrincipal('cli'), 'paused')
  expect([paused.status, paused.percent]).toEqual(['paused', 49])
})

test('reading: no rollout, an unknown flag or environment is a 404; a token outside the environment a 403', async () => {
  const store = await storeWith(flagRow('plain', undefined), flagRow('checkout', rollout()))
  const { watcher } = watcherOn(store)
  const cli = systemPrincipal('cli')
  expect(() => watcher.report(cli, 'plain')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }))
  expect(() => watcher.report(cli, 'ghost')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }))
  expect(() => watcher.report(cli, 'checkout', 'nowhere')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }))
  const staging = {
    kind: 'token' as const,
    tokenId: 'tok_1',
    name: 'ci',
    permissions: ['flag:read@staging' as const],
    flagPrefixes: [],
  }
  // the rollout is production's: staging has none
  expect(() => watcher.report(staging, 'checkout', 'staging')).toThrow(
    expect.objectContaining({ message: expect.stringContaining('no rollout') }),
  )
  const everywhere = { ...staging, permissions: ['flag:read' as const] }
  expect(watcher.report(everywhere, 'checkout').status).toBe('running')
  const outside = { ...everywhere, flagPrefixes: ['mobile/'] }
  expect(() => watcher.report(outside, 'checkout')).toThrow(expect.objectContaining({ message: 'no flag named "checkout"' }))
  expect(() => watcher.report(staging, 'checkout', 'production')).toThrow(expect.objectContaining({ code: 'FORBIDDEN' }))
})

test('a report arriving while a trip is committed waits for it instead of asking twice', async () => {
  const store = await storeWith(flagRow('checkout', rollout()))
  let release: () => void = () => {}
  const halts: HaltRequest[] = []
  const watcher = createGuardWatcher({
    store,
    now: () => new Date(NOW),
    environment: 'production',
    metrics: { totals: (_e, _f, metric) => regressed(metric) },
    halt: async (request) => {
      halts.push(request)
      await new Promise<void>((resolve) => {
        release = resolve
      })
      // the commit lands: the stored rollout is halted from here on
      return haltRollout({ store, now: () => new Date(NOW) }, request)
    },
  })
  const first = watcher.reported('production', ['checkout'])
  const second = watcher.reported('production', ['checkout'])
  await eventually(() => halts.length === 1) // the first check is inside its halt
  release()
  await Promise.all([first, second])
  expect(halts).toHaveLength(1)
})

test('the timer checks every guard without a report: a threshold window slides into a trip on its own', async () => {
  const store = await storeWith(flagRow('quiet', rollout()))
  const halts: HaltRequest[] = []
  const watcher = createGuardWatcher({
    store,
    now: () => new Date(NOW),
    environment: 'production',
    metrics: { totals: (_e, _f, metric) => regressed(metric) },
    halt: async (request) => {
      halts.push(request)
      return 'halted'
    },
    checkEveryMs: 10, // what is tested is that the timer checks, not how long 10 s is
  })
  watcher.start()
  try {
    await eventually(() => halts.length > 0)
    expect(halts[0]).toMatchObject({ env: 'production', flag: 'quiet' })
  } finally {
    await watcher.stop()
  }
})
