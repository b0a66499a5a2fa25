import { expect, test } from 'bun:test'
import { pendingCounts, tabWords } from '../../src/ui/app/environment-tab-words.ts'

test("a tab names the environment, the flag's on/off state there and its pending requests", () => {
  expect(tabWords('production', true, 1)).toBe('production · on · 1 pending')
  expect(tabWords('staging', false, 0)).toBe('staging · off · 0 pending')
  expect(tabWords('development', undefined, 2)).toBe('development · 2 pending')
})

test('only open, approved and scheduled requests that change this flag count, per environment', () => {
  const r = (environment: string, state: string, ...flags: string[]) => ({ environment, state, changes: flags.map((flag) => ({ flag })) })
  const counts = pendingCounts(
    [
      r('production', 'open', 'a'),
      r('production', 'scheduled', 'b', 'a'),
      r('production', 'applied', 'a'),
      r('staging', 'approved', 'a'),
      r('staging', 'rejected', 'a'),
      r('staging', 'open', 'b'),
      r('development', 'cancelled', 'a'),
    ],
    'a',
  )
  expect(Object.fromEntries(counts)).toEqual({ production: 2, staging: 1 })
})
