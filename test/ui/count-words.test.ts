import { expect, test } from 'bun:test'
import { countOf } from '../../src/ui/app/count-words.ts'
import { localTime } from '../../src/ui/app/local-time.ts'

test('a count says its noun in the singular for one only', () => {
  expect(countOf(1, 'evaluation')).toBe('1 evaluation')
  expect(countOf(0, 'evaluation')).toBe('0 evaluations')
  expect(countOf(2, 'approval')).toBe('2 approvals')
  expect(countOf(1520, 'flag')).toBe('1,520 flags')
  expect(countOf(3, 'flag differs', 'flags differ')).toBe('3 flags differ')
})

test("a time is written in the viewer's locale and zone, with the zone named", () => {
  const at = '2026-12-08T09:00:00Z'
  expect(localTime(at, 'en-GB', 'UTC')).toBe('8 Dec 2026, 09:00 UTC')
  expect(localTime(at, 'en-US', 'America/New_York')).toBe('Dec 8, 2026, 04:00 AM EST')
  expect(localTime(at, 'de-DE', 'Europe/Berlin')).toBe('8. Dez. 2026, 10:00 MEZ')
  expect(localTime('not a time')).toBe('not a time')
  // formatters are kept per locale and zone: asking again, in any order, gives each its own answer
  expect(localTime(at, 'en-GB', 'Europe/Berlin')).toBe('8 Dec 2026, 10:00 CET')
  expect(localTime(at, 'en-GB', 'UTC')).toBe('8 Dec 2026, 09:00 UTC')
  expect(localTime('2026-12-08T10:30:00Z', 'de-DE', 'Europe/Berlin')).toBe('8. Dez. 2026, 11:30 MEZ')
})
