/** What the rollout card says of a guard (src/ui/app/guard-words.ts), without a browser. */

import { expect, test } from 'bun:test'
import type { GuardCheck } from '../../src/domain/rollout-guard.ts'
import { type CheckReading, checkInWords, guardSummary, statusInWords, windowInWords } from '../../src/ui/app/guard-words.ts'

const time = (iso: string) => `${iso.slice(11, 16)} UTC`
const errorRate: GuardCheck = { kind: 'error-rate', errors: 'errors', total: 'requests' }
const mean: GuardCheck = { kind: 'mean', histogram: 'http.server.request.duration' }
const threshold: GuardCheck = { kind: 'threshold', metric: 'app.crashes', max: 5, windowSeconds: 300 }
const tripped = { status: 'rolled-back' as const, guard: { checks: [], checkedAt: null, trippedAt: '2026-12-08T10:42:00.000Z' } }
const running = { status: 'running' as const, guard: { checks: [], checkedAt: null, trippedAt: null } }

test('an error-rate check that tripped: rates in %, the difference in points with its interval, and when it rolled back', () => {
  const reading: CheckReading = {
    kind: 'error-rate',
    state: 'tripped',
    treatment: { total: 1000, errors: 21, rate: 0.021 },
    control: { total: 3000, errors: 30, rate: 0.01 },
    difference: { estimate: 0.011, lower: 0.006, upper: 0.016 },
  }
  expect(checkInWords(errorRate, reading, tripped, time)).toBe(
    'errors 2.1 % with the new variant against 1.0 % without: +1.1 points (0.6 to 1.6); rolled back at 10:42 UTC',
  )
  expect(checkInWords(errorRate, reading, { ...tripped, status: 'paused' }, time)).toEndWith('; paused at 10:42 UTC')
})

test('a healthy error-rate check says so; a negative difference takes a minus sign', () => {
  const reading: CheckReading = {
    kind: 'error-rate',
    state: 'healthy',
    treatment: { total: 500, errors: 4, rate: 0.008 },
    control: { total: 500, errors: 6, rate: 0.012 },
    difference: { estimate: -0.004, lower: -0.011, upper: 0.003 },
  }
  expect(checkInWords(errorRate, reading, running, time)).toBe(
    'errors 0.8 % with the new variant against 1.2 % without: −0.4 points (−1.1 to 0.3); healthy',
  )
})

test("a check still collecting counts the smaller arm against minSamples (its default 200, or the guard's)", () => {
  const reading: CheckReading = {
    kind: 'error-rate',
    state: 'collecting',
    treatment: { total: 120, errors: 1, rate: 0.008 },
    control: { total: 900, errors: 9, rate: 0.01 },
    difference: null,
  }
  expect(checkInWords(errorRate, reading, running, time)).toBe('errors: collecting: 120 of 200 samples')
  expect(checkInWords(errorRate, reading, { ...running, minSamples: 1000 }, time)).toBe('errors: collecting: 120 of 1000 samples')
  const histogram: CheckReading = {
    kind: 'mean',
    state: 'collecting',
    treatment: { count: 30, mean: 0.2 },
    control: null,
    difference: null,
  }
  expect(checkInWords(mean, histogram, running, time)).toBe('http.server.request.duration: collecting: 0 of 200 samples')
})

test("a mean check speaks in the metric's units", () => {
  const reading: CheckReading = {
    kind: 'mean',
    state: 'tripped',
    treatment: { count: 400, mean: 0.2124 },
    control: { count: 800, mean: 0.18 },
    difference: { estimate: 0.0324, lower: 0.0101, upper: 0.0547 },
  }
  expect(checkInWords(mean, reading, tripped, time)).toBe(
    'http.server.request.duration mean 0.212 with the new variant against 0.18 without: +0.0324 (0.0101 to 0.0547); rolled back at 10:42 UTC',
  )
})

test('a threshold says "N in the last W" against its limit', () => {
  const reading: CheckReading = { kind: 'threshold', state: 'healthy', treatment: { increase: 3 }, control: null, difference: null }
  expect(checkInWords(threshold, reading, running, time)).toBe('app.crashes 3 in the last 5 min with the new variant (at most 5)')
  expect(checkInWords(threshold, { ...reading, state: 'tripped', treatment: { increase: 7 } }, tripped, time)).toBe(
    'app.crashes 7 in the last 5 min with the new variant (at most 5); rolled back at 10:42 UTC',
  )
  expect(checkInWords(threshold, undefined, running, time)).toBe('app.crashes: nothing reported yet')
})

test('windows in the words people use', () => {
  expect(windowInWords(10)).toBe('10 s')
  expect(windowInWords(90)).toBe('90 s')
  expect(windowInWords(300)).toBe('5 min')
  expect(windowInWords(3600)).toBe('1 h')
  expect(windowInWords(5400)).toBe('1 h 30 min')
  expect(windowInWords(86_400)).toBe('1 day')
})

test('where a stopped rollout stands; a running one leaves it to the timeline', () => {
  const rollout = { variant: 'true' }
  expect(statusInWords({ rollout, status: 'rolled-back', percent: 0, guard: tripped.guard }, time)).toBe(
    'Rolled back by its guard at 10:42 UTC: the rollout serves "true" to no one',
  )
  expect(statusInWords({ rollout, status: 'paused', percent: 35, guard: tripped.guard }, time)).toBe(
    'Paused by its guard at 10:42 UTC: serves "true" to 35 % of contexts until the rollout is written again',
  )
  expect(statusInWords({ rollout, status: 'running', percent: 35, guard: null }, time)).toBeNull()
})

test('a guard in a few words, with its defaults', () => {
  expect(guardSummary({ checks: [errorRate] })).toBe(
    'Guarded by 1 check (at least 200 samples per arm, alpha 0.05); rolls back when one trips',
  )
  expect(guardSummary({ checks: [errorRate, mean], minSamples: 50, alpha: 0.01, action: 'pause' })).toBe(
    'Guarded by 2 checks (at least 50 samples per arm, alpha 0.01); pauses when one trips',
  )
})
