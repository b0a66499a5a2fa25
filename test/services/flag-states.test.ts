/**
 * What a write in one environment does to the others' states (docs/environments.md): carried over
 * and checked against the new shared fields, reset by a change of type, the same everywhere for a
 * new flag, or the type defaults elsewhere for one made in a named environment.
 */

import { expect, test } from 'bun:test'
import type { Environment } from '../../src/domain/environment.ts'
import { type FlagRow, flagIn } from '../../src/domain/flag-row.ts'
import { bornIn, carryStates } from '../../src/services/flag-states.ts'
import type { Snapshot } from '../../src/storage/store.ts'

const at = '2026-12-01T00:00:00.000Z'
const read = {
  environments: new Map(['production', 'staging', 'dev'].map((name) => [name, { name } as Environment])),
  segmentRules: () => new Map(),
} as unknown as Snapshot
const row: FlagRow = {
  id: 'flg_f',
  name: 'f',
  type: 'ENUM',
  description: '',
  defaultValue: 'red',
  enumValues: ['red', 'blue'],
  states: {
    production: { valueExists: true, value: 'red', enabled: true },
    staging: { valueExists: true, value: 'blue', enabled: true },
    dev: { valueExists: false, enabled: false },
  },
  createdAt: at,
  updatedAt: at,
  revision: 1,
}

test("a state change in one environment keeps every other one's, and moves only its served revision", () => {
  const next = { ...flagIn(row, 'staging'), value: 'red', revision: 2 }
  const out = carryStates(read, next, row, 'staging')
  expect(out.states).toEqual({ ...row.states, staging: { valueExists: true, value: 'red', enabled: true } })
  expect(out.servedRevisions).toEqual({ production: 1, dev: 1 })
  expect(out).not.toHaveProperty('value')
})

test('a shared change that breaks another environment state is refused naming it', () => {
  const next = { ...flagIn(row, 'production'), enumValues: ['red'], revision: 2 }
  expect(() => carryStates(read, next, row, 'production')).toThrow()
  try {
    carryStates(read, next, row, 'production')
  } catch (err) {
    expect(JSON.stringify(err)).toContain('environments.staging.')
  }
})

test("a change of type resets the others' states to the type defaults", () => {
  const next = { ...flagIn(row, 'production'), type: 'STRING' as const, enumValues: undefined, defaultValue: '', value: 'x', revision: 2 }
  const out = carryStates(read, next, row, 'production')
  expect(out.states).toEqual({
    production: { valueExists: true, value: 'x', enabled: true },
    staging: { valueExists: false, enabled: true },
    dev: { valueExists: false, enabled: true },
  })
  expect(out.servedRevisions).toBeUndefined()
})

test('a new flag: the same state everywhere, or, made in a named environment, the type defaults elsewhere', () => {
  const made = flagIn(row, 'staging')
  const staging = { valueExists: true, value: 'blue', enabled: true }
  expect(Object.values(carryStates(read, made, undefined, 'production').states)).toEqual([staging, staging, staging])
  expect(bornIn(read, made, 'staging').states).toEqual({
    production: { valueExists: false, enabled: true },
    staging,
    dev: { valueExists: false, enabled: true },
  })
})
