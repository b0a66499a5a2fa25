/** Flag usage in the domain: hours, summing buckets of several replicas, and staleness. */

import { expect, test } from 'bun:test'
import { flagUsageOf, hourOf, isStale } from '../../src/domain/flag-usage.ts'

const DAY = 86_400_000
const now = Date.parse('2026-11-25T06:30:00Z')

test('hours start on the hour, UTC', () => {
  expect(hourOf(Date.parse('2026-11-25T06:59:59.999Z'))).toBe('2026-11-25T06:00:00.000Z')
  expect(hourOf(Date.parse('2026-11-25T07:00:00Z'))).toBe('2026-11-25T07:00:00.000Z')
})

test("buckets of several replicas add up; hours in order; a 304's count only in the total", () => {
  const b = (hour: string, variant: string, count: number, lastAt: string) => ({
    flagId: 'f',
    hour,
    variant,
    reason: 'STATIC',
    count,
    lastAt,
  })
  expect(
    flagUsageOf('x', [
      b('2026-11-25T06:00:00.000Z', 'on', 2, '2026-11-25T06:10:00.000Z'),
      b('2026-11-25T05:00:00.000Z', 'on', 1, '2026-11-25T05:59:00.000Z'),
      b('2026-11-25T06:00:00.000Z', 'on', 3, '2026-11-25T06:20:00.000Z'),
      b('2026-11-25T06:00:00.000Z', '', 4, '2026-11-25T06:25:00.000Z'),
    ]),
  ).toEqual({
    name: 'x',
    total: 10,
    lastEvaluatedAt: '2026-11-25T06:25:00.000Z',
    lastSyncedAt: null,
    lastServedInProcessAt: null,
    heldInProcess: false,
    variants: { on: 6 },
    hours: [
      { at: '2026-11-25T05:00:00.000Z', count: 1 },
      { at: '2026-11-25T06:00:00.000Z', count: 9 },
    ],
  })
})

test('stale: neither evaluated nor changed within the days', () => {
  const old = new Date(now - 40 * DAY).toISOString()
  const recent = new Date(now - 2 * DAY).toISOString()
  expect(isStale(null, old, now, 30)).toBe(true)
  expect(isStale(new Date(now - 31 * DAY).toISOString(), old, now, 30)).toBe(true)
  expect(isStale(recent, old, now, 30)).toBe(false) // evaluated lately
  expect(isStale(null, recent, now, 30)).toBe(false) // made or changed lately
  expect(isStale(null, recent, now, 1)).toBe(true)
})
