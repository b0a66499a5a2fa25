import { expect, test } from 'bun:test'
import type { Flag } from '../../src/domain/flag.ts'
import { prerequisiteHolds } from '../../src/domain/prerequisite-evaluation.ts'

// a required flag and what it answered: only the fields the check reads matter here
const answered = (flag: Partial<Flag>, value: unknown) => ({
  flag: { name: 'req', ...flag } as Flag,
  result: { key: 'req', value, variant: 'x', reason: 'TARGETING_MATCH' } as never,
})
const holds = (variants: string[], flag: Partial<Flag>, value: unknown) =>
  prerequisiteHolds({ flag: 'req', variants }, answered(flag, value))

test("a prerequisite holds when the answer equals the value of a variant named: the flag's own, then the built-in ones", () => {
  const ruled = { type: 'BOOLEAN', variants: { on: true, off: false } } as const
  expect(holds(['on'], ruled, true)).toBe(true)
  expect(holds(['off'], ruled, true)).toBe(false)
  // built-in variants count beside the flag's own
  expect(holds(['true'], ruled, true)).toBe(true)
  expect(holds(['false'], { type: 'BOOLEAN' }, false)).toBe(true)
  expect(holds(['true'], { type: 'BOOLEAN' }, false)).toBe(false)
  expect(holds(['green'], { type: 'ENUM', enumValues: ['red', 'green'] }, 'green')).toBe(true)
  expect(holds(['A', 'B'], { type: 'AB-TEST' }, 'B')).toBe(true)
  // a name the flag does not have never holds, whatever the value
  expect(holds(['nope'], { type: 'STRING' }, 'nope')).toBe(false)
  // values compare as JSON, keys in any order
  expect(holds(['big'], { type: 'OBJECT', variants: { big: { a: 1, b: [2] } } }, { b: [2], a: 1 })).toBe(true)
  // the flag's own variant of a built-in name is the one compared, as allVariants merges them
  expect(holds(['true'], { type: 'BOOLEAN', variants: { true: false } }, true)).toBe(false)
  expect(holds(['true'], { type: 'BOOLEAN', variants: { true: false } }, false)).toBe(true)
})

test('no answer, a failure or an answer without a value never holds', () => {
  expect(prerequisiteHolds({ flag: 'req', variants: ['true'] }, undefined)).toBe(false)
  const failed = { flag: { name: 'req', type: 'BOOLEAN' } as Flag, result: { key: 'req', errorCode: 'GENERAL' } as never }
  expect(prerequisiteHolds({ flag: 'req', variants: ['true'] }, failed)).toBe(false)
  expect(holds(['true'], { type: 'BOOLEAN' }, undefined)).toBe(false)
})
