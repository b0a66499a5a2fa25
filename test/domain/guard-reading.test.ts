/**
 * What a guard sees (docs/guarded-rollouts.md#what-a-guard-sees): the rollout's variant against all
 * the others, each check's arms and state, from per-variant totals.
 */

import { expect, test } from 'bun:test'
import { readCheck, readGuard, type VariantTotals } from '../../src/domain/guard-reading.ts'
import type { Guard, GuardCheck } from '../../src/domain/rollout-guard.ts'

const sum = (increase: number): VariantTotals => ({ kind: 'sum', increase })
const NOW = Date.parse('2026-12-07T12:00:00Z')
const scope = { variant: 'new', sinceMs: NOW - 3_600_000, nowMs: NOW }

/** Totals by metric and variant, the same whatever the span (a threshold test asks for its window). */
const fixed =
  (byMetric: Record<string, Record<string, VariantTotals>>) =>
  (metric: string): ReadonlyMap<string, VariantTotals> =>
    new Map(Object.entries(byMetric[metric] ?? {}))

const rateCheck: GuardCheck = { kind: 'error-rate', errors: 'errors', total: 'requests' }
const guard = (check: GuardCheck, extra: Partial<Guard> = {}): Guard => ({ checks: [check], ...extra })

test('error-rate: treatment is the rollout variant, control every other variant added up', () => {
  const totals = fixed({
    errors: { new: sum(50), old: sum(10), other: sum(10) },
    requests: { new: sum(1000), old: sum(1000), other: sum(1000) },
  })
  const r = readCheck(rateCheck, guard(rateCheck), scope, totals, true)
  expect(r.treatment).toEqual({ total: 1000, errors: 50, rate: 0.05 })
  expect(r.control).toEqual({ total: 2000, errors: 20, rate: 0.01 })
  expect(r.difference?.estimate).toBeCloseTo(0.04, 10)
  expect(r.state).toBe('tripped')
})

test('nothing is decided before minSamples in each arm; a rollout that may not trip stays healthy', () => {
  const totals = fixed({ errors: { new: sum(100), old: sum(0) }, requests: { new: sum(150), old: sum(5000) } })
  const collecting = readCheck(rateCheck, guard(rateCheck), scope, totals, true)
  expect(collecting).toMatchObject({ state: 'collecting', difference: null })
  const bad = fixed({ errors: { new: sum(500), old: sum(0) }, requests: { new: sum(1000), old: sum(1000) } })
  expect(readCheck(rateCheck, guard(rateCheck, { minSamples: 100 }), scope, bad, false).state).toBe('healthy')
  expect(readCheck(rateCheck, guard(rateCheck, { minSamples: 100 }), scope, bad, true).state).toBe('tripped')
})

test('maxIncrease is the margin the whole interval must clear; more errors than requests count as a rate of 1', () => {
  const totals = fixed({ errors: { new: sum(60), old: sum(10) }, requests: { new: sum(1000), old: sum(1000) } })
  const withMargin = { ...rateCheck, maxIncrease: 0.2 }
  expect(readCheck(withMargin, guard(withMargin), scope, totals, true).state).toBe('healthy')
  const odd = fixed({ errors: { new: sum(5000) }, requests: { new: sum(1000), old: sum(1000) } })
  expect(readCheck(rateCheck, guard(rateCheck), scope, odd, true).treatment).toEqual({ total: 1000, errors: 1000, rate: 1 })
})

test('mean: histogram arms added up bucket by bucket; bounds that differ are left out', () => {
  const bounds = [0.1, 0.5, 1]
  const h = (count: number, sum: number, buckets: number[], b = bounds): VariantTotals => ({
    kind: 'histogram',
    count,
    sum,
    bounds: b,
    buckets,
  })
  const check: GuardCheck = { kind: 'mean', histogram: 'latency' }
  const totals = fixed({
    latency: {
      new: h(400, 400 * 0.8, [0, 0, 400, 0]),
      old: h(300, 300 * 0.2, [0, 300, 0, 0]),
      also: h(300, 300 * 0.2, [0, 300, 0, 0]),
      odd: h(999, 9999, [999, 0], [5]),
    },
  })
  const r = readCheck(check, guard(check), scope, totals, true)
  expect(r.treatment).toEqual({ count: 400, mean: 0.8 })
  expect(r.control).toEqual({ count: 600, mean: expect.closeTo(0.2, 10) })
  expect(r.state).toBe('tripped')
  expect(r.difference?.estimate).toBeCloseTo(0.6, 10)
})

test('threshold: the treatment increase over the window, from the later of the window and the guard start', () => {
  const asked: number[] = []
  const check: GuardCheck = { kind: 'threshold', metric: 'crashes', max: 5, windowSeconds: 60 }
  const totals = (metric: string, since: number) => {
    asked.push(since)
    return new Map<string, VariantTotals>([
      ['new', sum(metric === 'crashes' ? 6 : 0)],
      ['old', sum(100)],
    ])
  }
  const r = readCheck(check, guard(check), scope, totals, true)
  expect(r).toEqual({ kind: 'threshold', state: 'tripped', treatment: { increase: 6 }, control: null, difference: null })
  expect(asked).toEqual([NOW - 60_000])
  readCheck(check, guard(check), { ...scope, sinceMs: NOW - 10_000 }, totals, true)
  expect(asked[1]).toBe(NOW - 10_000)
  expect(readCheck({ ...check, max: 6 }, guard(check), scope, totals, true).state).toBe('healthy')
})

test('readGuard names the first check that tripped', () => {
  const ok: GuardCheck = { kind: 'threshold', metric: 'quiet', max: 1, windowSeconds: 60 }
  const bad: GuardCheck = { kind: 'threshold', metric: 'loud', max: 1, windowSeconds: 60 }
  const totals = fixed({ loud: { new: sum(2) } })
  expect(readGuard({ checks: [ok, bad, bad] }, scope, totals, true).tripped).toBe(1)
  expect(readGuard({ checks: [ok] }, scope, totals, true).tripped).toBe(-1)
})
