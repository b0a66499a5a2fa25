/**
 * The stored flag and its views (docs/environments.md#how-flags-are-stored): every environment's
 * state alike in `states`, one function (`flagIn`) for the flag as an environment sees it, and the
 * revision each environment last saw it change at.
 */

import { expect, test } from 'bun:test'
import { type FlagRow, flagIn, revisedEverywhere, rowEverywhere, stampServed, stateIn, withStateIn } from '../../src/domain/flag-row.ts'

const at = '2026-12-01T00:00:00.000Z'
/** The definition every environment shares, as the row stores it and every view shows it. */
const shared = { id: 'flg_f', name: 'f', type: 'INTEGER', description: 'd', defaultValue: 0, variants: { low: 1, high: 9 } } as const
const row: FlagRow = {
  ...shared,
  states: {
    production: { valueExists: true, value: 3, enabled: true },
    staging: { valueExists: true, value: 7, enabled: false, targeting: { if: [true, 'high'] } },
  },
  servedRevisions: { production: 2 },
  createdAt: at,
  updatedAt: at,
  revision: 4,
}

test('a view is the shared definition with one environment state, and no other', () => {
  const staging = flagIn(row, 'staging')
  expect(staging).toEqual({
    ...shared,
    valueExists: true,
    value: 7,
    enabled: false,
    targeting: { if: [true, 'high'] },
    createdAt: at,
    updatedAt: at,
    revision: 4,
  })
  expect(Object.isFrozen(staging)).toBe(true)
  // every environment the same way: none is read from the row's own fields
  expect(flagIn(row, 'production')).toMatchObject({ value: 3, enabled: true, servedRevision: 2 })
  expect(flagIn(row, 'production')).not.toHaveProperty('targeting')
})

test('an environment the row holds no state for sees the type defaults; a name like __proto__ is only a name', () => {
  expect(stateIn(row, 'qa')).toEqual({ valueExists: false, enabled: true })
  expect(flagIn(row, '__proto__')).toMatchObject({ valueExists: false, enabled: true })
  const odd = withStateIn(row, '__proto__', { valueExists: true, value: 5 })
  expect(Object.keys(odd.states)).toEqual(['production', 'staging', '__proto__'])
  expect(flagIn(odd, '__proto__')).toMatchObject({ value: 5 })
  expect(flagIn(odd, 'production')).toMatchObject({ value: 3 })
})

test('a flag the same everywhere holds the one state in each environment named', () => {
  const made = rowEverywhere(flagIn(row, 'staging'), ['production', 'dev'])
  const staging = { valueExists: true, value: 7, enabled: false, targeting: { if: [true, 'high'] } }
  expect(made.states).toEqual({ production: staging, dev: staging })
  expect(made).not.toHaveProperty('value')
  expect(made).not.toHaveProperty('servedRevision')
})

test("served revisions: a state change moves only its environment; a shared one every environment's", () => {
  const next = { ...withStateIn(row, 'staging', { valueExists: true, value: 8 }), revision: 5 }
  expect(stampServed(row, next).servedRevisions).toEqual({ production: 2 })
  const both = { ...withStateIn(next, 'production', { valueExists: true, value: 4 }), revision: 5 }
  expect(stampServed(row, both).servedRevisions).toBeUndefined()
  const shared = { ...row, description: 'new', revision: 5 }
  expect(stampServed(row, shared).servedRevisions).toBeUndefined()
  const none = { ...row, revision: 5 }
  expect(stampServed(row, none).servedRevisions).toEqual({ production: 2, staging: 4 })
  expect(revisedEverywhere(row, at)).toMatchObject({ revision: 5 })
  expect(revisedEverywhere(row, at)).not.toHaveProperty('servedRevisions')
})
