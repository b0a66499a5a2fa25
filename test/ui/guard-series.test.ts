/** A check's arms over time and a guard's form (src/ui/app/guard-series.ts, guard-draft.ts), without a browser. */

import { expect, test } from 'bun:test'
import { draftOfGuard, guardOfDraft, newCheck } from '../../src/ui/app/guard-draft.ts'
import { checkSeries, type Impact, stepFor } from '../../src/ui/app/guard-series.ts'

const T0 = '2026-12-08T10:00:00.000Z'
const T1 = '2026-12-08T10:01:00.000Z'
const T2 = '2026-12-08T10:02:00.000Z'
const sum = (metric: string, series: Record<string, [string, number][]>): Impact => ({
  metric,
  kind: 'sum',
  step: 60,
  series: Object.entries(series).map(([variant, points]) => ({ variant, points: points.map(([at, increase]) => ({ at, increase })) })),
})

test('an error-rate check: cumulative errors/total per arm, every other variant adding up to control', () => {
  const errors = sum('errors', {
    on: [
      [T0, 2],
      [T2, 4],
    ],
    off: [[T0, 1]],
    beta: [[T1, 1]],
  })
  const total = sum('requests', {
    on: [
      [T0, 100],
      [T1, 100],
      [T2, 100],
    ],
    off: [
      [T0, 50],
      [T1, 50],
    ],
    beta: [
      [T0, 50],
      [T1, 50],
    ],
  })
  const s = checkSeries({ kind: 'error-rate', errors: 'errors', total: 'requests' }, 'on', { errors, requests: total })
  expect(s.at).toEqual([T0, T1, T2])
  expect(s.lines).toEqual([
    { arm: 'treatment', values: [0.02, 0.01, 0.02] },
    { arm: 'control', values: [0.01, 0.01, 0.01] },
  ])
  expect(s.limit).toBeNull()
})

test('a mean check: cumulative sum/count per arm; an arm with nothing yet has no value', () => {
  const h: Impact = {
    metric: 'latency',
    kind: 'histogram',
    step: 60,
    series: [
      { variant: 'on', points: [{ at: T1, count: 4, sum: 2 }] },
      {
        variant: 'off',
        points: [
          { at: T0, count: 2, sum: 0.4 },
          { at: T1, count: 2, sum: 0.8 },
        ],
      },
    ],
  }
  const s = checkSeries({ kind: 'mean', histogram: 'latency' }, 'on', { latency: h })
  expect(s.lines).toEqual([
    { arm: 'treatment', values: [null, 0.5] },
    { arm: 'control', values: [0.2, 0.30000000000000004] },
  ])
})

test("a threshold: the new variant's increase over the sliding window, and the limit", () => {
  const m = sum('crashes', {
    on: [
      [T0, 3],
      [T1, 2],
      [T2, 1],
    ],
    off: [[T1, 50]],
  })
  const s = checkSeries({ kind: 'threshold', metric: 'crashes', max: 4, windowSeconds: 120 }, 'on', { crashes: m })
  expect(s.lines).toEqual([{ arm: 'treatment', values: [3, 5, 3] }])
  expect(s.limit).toBe(4)
  expect(checkSeries({ kind: 'threshold', metric: 'crashes', max: 4, windowSeconds: 120 }, 'on', {}).at).toEqual([])
})

test('steps draw about 60 points, within what the API takes (10–3,600 s)', () => {
  expect(stepFor(0)).toBe(10)
  expect(stepFor(3600)).toBe(60)
  expect(stepFor(7 * 86_400)).toBe(3600)
})

test('the form sends what the API takes: points as a rate, empty optional fields left out, no checks no guard', () => {
  const draft = draftOfGuard(undefined)
  expect(guardOfDraft(draft)).toBeUndefined()
  const errorRate = { ...newCheck('error-rate'), maxIncrease: '1.5' }
  const threshold = { ...newCheck('threshold'), metric: ' app.crashes ', max: '5', windowSeconds: '600' }
  const guard = guardOfDraft({ ...draft, checks: [errorRate, newCheck('mean'), threshold], alpha: '0.01' })
  expect(guard).toEqual({
    checks: [
      { kind: 'error-rate', errors: 'app.errors', total: 'app.requests', maxIncrease: 0.015 },
      { kind: 'mean', histogram: 'http.server.request.duration' },
      { kind: 'threshold', metric: 'app.crashes', max: 5, windowSeconds: 600 },
    ],
    alpha: 0.01,
    action: 'rollback',
  })
  // and reads back as it was typed
  expect(draftOfGuard(guard).checks[0]?.maxIncrease).toBe('1.5')
  expect(guardOfDraft(draftOfGuard(guard))).toEqual(guard)
  // text that is no number goes as typed, for the service to name its field
  expect(guardOfDraft({ ...draft, checks: [errorRate], minSamples: 'many' })?.minSamples).toBe('many' as unknown as number)
})
