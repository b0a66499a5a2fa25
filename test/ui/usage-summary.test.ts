/** What a flag's page says of its usage (src/ui/app/usage-summary.ts), without a browser. */

import { expect, test } from 'bun:test'
import { dailyTotals, inProcessNote } from '../../src/ui/app/usage-summary.ts'

const NOW = Date.parse('2026-11-27T12:00:00.000Z')

test('in-process use: "held now" only while the daemon says a stream holds it, else when last served', () => {
  expect(inProcessNote({ lastServedInProcessAt: null, heldInProcess: false })).toBeNull()
  expect(inProcessNote({ lastServedInProcessAt: '2026-11-27T12:00:00.000Z', heldInProcess: true })).toStartWith(
    'Also used in-process: held by an in-process provider now',
  )
  // a provider that left 30 s ago holds nothing now
  expect(inProcessNote({ lastServedInProcessAt: '2026-11-27T11:59:30.000Z', heldInProcess: false })).toStartWith(
    'Also used in-process: last served in-process ',
  )
  const earlier = inProcessNote({ lastServedInProcessAt: '2026-11-26T08:00:00.000Z', heldInProcess: false })
  expect(earlier).toStartWith('Also used in-process: last served in-process ')
  expect(earlier).toContain('not stale')
  expect(earlier).toContain('OTLP')
})

test('the chart holds the last seven UTC days, today last, hours added to their day', () => {
  const days = dailyTotals(
    [
      { at: '2026-11-27T01:00:00.000Z', count: 2 },
      { at: '2026-11-27T09:00:00.000Z', count: 3 },
      { at: '2026-11-21T00:00:00.000Z', count: 5 },
      { at: '2026-11-20T23:00:00.000Z', count: 7 }, // eight days ago: not shown
    ],
    NOW,
  )
  expect(days.map((d) => d.day)).toEqual(['2026-11-21', '2026-11-22', '2026-11-23', '2026-11-24', '2026-11-25', '2026-11-26', '2026-11-27'])
  expect(days.map((d) => d.count)).toEqual([5, 0, 0, 0, 0, 0, 5])
})
