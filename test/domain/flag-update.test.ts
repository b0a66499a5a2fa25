/** mergeUpdate (docs/api.md#flags): which candidate definition a partial PUT produces, before validation. */

import { expect, test } from 'bun:test'
import type { FlagDefinition } from '../../src/domain/flag.ts'
import { validateDefinition } from '../../src/domain/flag-definition.ts'
import { mergeUpdate } from '../../src/domain/flag-update.ts'

const int: FlagDefinition = {
  type: 'INTEGER',
  description: 'retries',
  defaultValue: 3,
  valueExists: true,
  value: 5,
  minValue: 1,
  maxValue: 10,
}
const unset: FlagDefinition = { type: 'BOOLEAN', description: '', defaultValue: false, valueExists: false }

test.each<[string, FlagDefinition, Record<string, unknown>, Record<string, unknown>]>([
  ['an empty patch keeps everything', int, {}, { ...int }],
  ['value sets it and valueExists', unset, { value: true }, { ...unset, value: true, valueExists: true }],
  ['value with valueExists true', unset, { value: true, valueExists: true }, { ...unset, value: true, valueExists: true }],
  [
    'value beside valueExists false is passed on for validation to refuse',
    unset,
    { value: true, valueExists: false },
    { ...unset, value: true, valueExists: false },
  ],
  [
    'valueExists false clears the value',
    int,
    { valueExists: false },
    { type: 'INTEGER', description: 'retries', defaultValue: 3, valueExists: false, minValue: 1, maxValue: 10 },
  ],
  [
    'value null clears the value',
    int,
    { value: null },
    { type: 'INTEGER', description: 'retries', defaultValue: 3, valueExists: false, minValue: 1, maxValue: 10 },
  ],
  ['valueExists true alone is passed on (validation asks for a value)', unset, { valueExists: true }, { ...unset, valueExists: true }],
  [
    'null removes a constraint',
    int,
    { maxValue: null },
    { type: 'INTEGER', description: 'retries', defaultValue: 3, valueExists: true, value: 5, minValue: 1 },
  ],
  ['a constraint is replaced', int, { maxValue: 20 }, { ...int, maxValue: 20 }],
  [
    'defaultValue null means no default (docs/targeting.md#flagd-format)',
    int,
    { defaultValue: null },
    { type: 'INTEGER', description: 'retries', defaultValue: null, valueExists: true, value: 5, minValue: 1, maxValue: 10 },
  ],
  ['description is replaced', int, { description: 'new' }, { ...int, description: 'new' }],
  ['the same type is not a type change', int, { type: 'INTEGER', value: 6 }, { ...int, value: 6 }],
  ['a type change keeps only the description', int, { type: 'BOOLEAN' }, { type: 'BOOLEAN', description: 'retries' }],
  [
    'a type change takes value and constraints from the body',
    int,
    { type: 'ENUM', enumValues: ['a', 'b'], value: 'b' },
    { type: 'ENUM', description: 'retries', enumValues: ['a', 'b'], value: 'b', valueExists: true },
  ],
  ['unknown fields are passed on for validation to name', int, { colour: 'red' }, { ...int, colour: 'red' }],
  ['the name is not part of the definition', int, { name: 'other' }, { ...int }],
  ['read-only fields are not part of the definition', int, { revision: 9, createdAt: 'x', updatedAt: 'y' }, { ...int }],
  [
    'targeting fields are patched; null removes them',
    { ...int, metadata: { team: 'x' } },
    { enabled: false, metadata: null, variants: { low: 1 } },
    { ...int, enabled: false, variants: { low: 1 } },
  ],
  [
    'a type change carries enabled and metadata, not variants or rules',
    { ...int, enabled: false, metadata: { t: 1 }, variants: { a: 1 }, targeting: { if: [true, 'a'] } },
    { type: 'BOOLEAN' },
    { type: 'BOOLEAN', description: 'retries', enabled: false, metadata: { t: 1 } },
  ],
])('%s', (_name, current, patch, expected) => {
  // every definition reads as enabled unless it says otherwise
  expect(mergeUpdate(current, patch)).toEqual({ enabled: true, ...expected })
})

test('the current definition is never modified', () => {
  const current = structuredClone(int)
  mergeUpdate(current, { value: 7, maxValue: null, type: 'STRING' })
  expect(current).toEqual(int)
})

test('value: null beside a valueExists that is not true or false is refused, naming valueExists', () => {
  const current = { type: 'BOOLEAN', description: '', defaultValue: false, valueExists: true, value: true } as const
  const result = validateDefinition(mergeUpdate(current, { valueExists: ['a'], value: null }))
  expect(result.ok).toBe(false)
  if (!result.ok) expect(result.problems).toContainEqual({ field: 'valueExists', reason: 'must be true or false' })
})
