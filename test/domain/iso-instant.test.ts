import { expect, test } from 'bun:test'
import { parseIsoInstant } from '../../src/domain/iso-instant.ts'

test.each([
  ['2026-11-01', Date.UTC(2026, 10, 1)],
  ['2026-11-01T10:00Z', Date.UTC(2026, 10, 1, 10)],
  ['2026-11-01T10:00:00.5+01:00', Date.UTC(2026, 10, 1, 9, 0, 0, 500)],
  ['2026-11-01T10:00:00-0130', Date.UTC(2026, 10, 1, 11, 30)],
  ['2028-02-29', Date.UTC(2028, 1, 29)],
])('%s is read', (text, ms) => {
  expect(parseIsoInstant(text)).toBe(ms)
})

test.each([
  '2026-11-27 junk',
  '2026-02-31',
  '2026-02-29',
  '0000-01-01',
  '1969-12-31',
  '2026-13-01',
  '2026-11-01T24:00:00Z',
  '2026-11-01T10:00:00',
  '2026-11-01T10:00:00+25:00',
  'yesterday',
  '',
])('%p is refused', (text) => {
  expect(parseIsoInstant(text)).toBeUndefined()
})

test('a bare date is refused where a date-time is required', () => {
  expect(parseIsoInstant('2026-11-01', true)).toBeUndefined()
  expect(parseIsoInstant('2026-11-01T00:00:00Z', true)).toBe(Date.UTC(2026, 10, 1))
})
