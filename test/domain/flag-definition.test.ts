/** Validation tables per flag type: for every constraint a value that passes, one at the boundary, one that fails. */

import { describe, expect, test } from 'bun:test'
import { validateDefinition } from '../../src/domain/flag-definition.ts'

type Row = [string, Record<string, unknown>, string | null, string?]
// [case, definition, failing field or null when valid, reason fragment]

const rows: Record<string, Row[]> = {
  BOOLEAN: [
    ['zero default', { type: 'BOOLEAN' }, null],
    ['value true', { type: 'BOOLEAN', value: true }, null],
    ['value as string', { type: 'BOOLEAN', value: 'true' }, 'value', 'true or false'],
    ['constraint of another type', { type: 'BOOLEAN', minValue: 1 }, 'minValue', 'not a field of BOOLEAN'],
  ],
  INTEGER: [
    ['inside bounds', { type: 'INTEGER', defaultValue: 5, minValue: 1, maxValue: 10, value: 7 }, null],
    ['value at maxValue', { type: 'INTEGER', defaultValue: 1, minValue: 1, maxValue: 10, value: 10 }, null],
    ['value at minValue', { type: 'INTEGER', defaultValue: 1, minValue: 1, maxValue: 10, value: 1 }, null],
    ['value above maxValue', { type: 'INTEGER', defaultValue: 1, maxValue: 10, value: 11 }, 'value', '11 is above maxValue 10'],
    ['value below minValue', { type: 'INTEGER', defaultValue: 5, minValue: 5, value: 4 }, 'value', '4 is below minValue 5'],
    ['minValue equal to maxValue', { type: 'INTEGER', defaultValue: 3, minValue: 3, maxValue: 3 }, null],
    ['minValue above maxValue', { type: 'INTEGER', defaultValue: 3, minValue: 4, maxValue: 3 }, 'minValue', 'above maxValue'],
    ['zero default breaks minValue', { type: 'INTEGER', minValue: 1 }, 'defaultValue', 'defaults to 0'],
    ['largest safe integer', { type: 'INTEGER', value: Number.MAX_SAFE_INTEGER }, null],
    ['unsafe integer', { type: 'INTEGER', value: Number.MAX_SAFE_INTEGER + 1 }, 'value', 'safe integer'],
    ['fraction', { type: 'INTEGER', value: 1.5 }, 'value', 'integer'],
    ['numeric string', { type: 'INTEGER', value: '5' }, 'value', 'integer'],
    ['fractional bound', { type: 'INTEGER', maxValue: 1.5 }, 'maxValue', 'integer'],
  ],
  STRING: [
    ['plain', { type: 'STRING', value: 'hello' }, null],
    ['at maxLength', { type: 'STRING', maxLength: 5, value: 'hello' }, null],
    ['over maxLength', { type: 'STRING', maxLength: 4, value: 'hello' }, 'value', 'above maxLength 4'],
    ['maxLength counts code points', { type: 'STRING', maxLength: 2, value: '😀😀' }, null],
    ['maxLength 0', { type: 'STRING', maxLength: 0 }, 'maxLength', 'at least 1'],
    ['unanchored match', { type: 'STRING', regexPattern: 'b', defaultValue: 'b', value: 'abc' }, null],
    ['anchored mismatch', { type: 'STRING', regexPattern: '^b$', value: 'abc' }, 'value', 'does not match'],
    ['zero default must match', { type: 'STRING', regexPattern: '^[a-z]+$' }, 'defaultValue', 'does not match'],
    ['backreference', { type: 'STRING', regexPattern: '(a)\\1' }, 'regexPattern', 'RE2'],
    ['lookahead', { type: 'STRING', regexPattern: '(?=a)' }, 'regexPattern', 'RE2'],
    ['pattern of 1000 characters', { type: 'STRING', regexPattern: 'a'.repeat(1000), defaultValue: 'a'.repeat(1000) }, null],
    ['pattern of 1001 characters', { type: 'STRING', regexPattern: 'a'.repeat(1001) }, 'regexPattern', 'at most 1000'],
    ['value of 65,536 characters', { type: 'STRING', value: 'x'.repeat(65_536) }, null],
    ['value of 65,537 characters', { type: 'STRING', value: 'x'.repeat(65_537) }, 'value', 'at most 65536'],
  ],
  ENUM: [
    ['value in enumValues', { type: 'ENUM', enumValues: ['a', 'b'], value: 'b' }, null],
    ['zero default is the first', { type: 'ENUM', enumValues: ['a', 'b'] }, null],
    ['value not in enumValues', { type: 'ENUM', enumValues: ['a', 'b'], value: 'c' }, 'value', 'not one of enumValues'],
    ['enumValues missing', { type: 'ENUM' }, 'enumValues', 'required'],
    ['enumValues empty', { type: 'ENUM', enumValues: [] }, 'enumValues', '1 to 1000'],
    ['1000 enumValues', { type: 'ENUM', enumValues: Array.from({ length: 1000 }, (_, i) => `v${i}`) }, null],
    ['1001 enumValues', { type: 'ENUM', enumValues: Array.from({ length: 1001 }, (_, i) => `v${i}`) }, 'enumValues', '1 to 1000'],
    ['duplicate enumValues', { type: 'ENUM', enumValues: ['a', 'a'] }, 'enumValues', 'repeats'],
    ['empty enum value', { type: 'ENUM', enumValues: ['a', ''] }, 'enumValues', 'empty'],
  ],
  TAG: [
    ['subset', { type: 'TAG', enumValues: ['a', 'b', 'c'], value: ['a', 'c'] }, null],
    ['at maxCount', { type: 'TAG', enumValues: ['a', 'b', 'c'], maxCount: 2, value: ['a', 'b'] }, null],
    ['over maxCount', { type: 'TAG', enumValues: ['a', 'b', 'c'], maxCount: 1, value: ['a', 'b'] }, 'value', 'above maxCount 1'],
    ['at minCount', { type: 'TAG', enumValues: ['a', 'b'], minCount: 1, defaultValue: ['a'] }, null],
    ['zero default breaks minCount', { type: 'TAG', enumValues: ['a', 'b'], minCount: 1 }, 'defaultValue', 'below minCount 1'],
    ['unknown tag', { type: 'TAG', enumValues: ['a'], value: ['z'] }, 'value', 'not one of enumValues'],
    ['repeated tag', { type: 'TAG', enumValues: ['a'], value: ['a', 'a'] }, 'value', 'repeats'],
    ['maxCount equal to enumValues length', { type: 'TAG', enumValues: ['a', 'b'], maxCount: 2 }, null],
    ['maxCount above enumValues length', { type: 'TAG', enumValues: ['a', 'b'], maxCount: 3 }, 'maxCount', 'number of enumValues'],
    [
      'minCount above maxCount',
      { type: 'TAG', enumValues: ['a', 'b'], minCount: 2, maxCount: 1, defaultValue: ['a', 'b'] },
      'minCount',
      'above maxCount',
    ],
    ['value not an array', { type: 'TAG', enumValues: ['a'], value: 'a' }, 'value', 'array'],
  ],
  'AB-TEST': [
    ['defaults', { type: 'AB-TEST' }, null],
    ['B with 100 %', { type: 'AB-TEST', value: 'B', chancePercentB: 100 }, null],
    ['decimals', { type: 'AB-TEST', chancePercentB: 25.5 }, null],
    ['0 %', { type: 'AB-TEST', chancePercentB: 0 }, null],
    ['over 100 %', { type: 'AB-TEST', chancePercentB: 100.01 }, 'chancePercentB', '0 to 100'],
    ['negative', { type: 'AB-TEST', chancePercentB: -1 }, 'chancePercentB', '0 to 100'],
    ['value C', { type: 'AB-TEST', value: 'C' }, 'value', '"A" or "B"'],
  ],
}

for (const [type, cases] of Object.entries(rows)) {
  describe(type, () => {
    // rest parameters: bun reads a 4th declared parameter as a done callback when a row has 3 items
    test.each(cases)('%s', (...row: Row) => {
      const [, input, field, reason] = row
      const result = validateDefinition(input)
      if (field === null) {
        expect(result).toMatchObject({ ok: true })
        return
      }
      expect(result.ok).toBe(false)
      if (result.ok) return
      const hit = result.problems.find((p) => p.field === field)
      expect(hit, JSON.stringify(result.problems)).toBeDefined()
      if (reason) expect(hit?.reason).toContain(reason)
    })
  })
}

describe('normalisation and reporting', () => {
  test('zero defaults, AB-TEST gets chancePercentB 50, field order is the contract order', () => {
    const r = validateDefinition({ chancePercentB: undefined, value: 'B', type: 'AB-TEST' })
    expect(r.ok && Object.keys(r.definition)).toEqual([
      'type',
      'description',
      'defaultValue',
      'valueExists',
      'value',
      'chancePercentB',
      'enabled',
    ])
    expect(r.ok && r.definition).toEqual({
      type: 'AB-TEST',
      description: '',
      defaultValue: 'A',
      valueExists: true,
      value: 'B',
      chancePercentB: 50,
      enabled: true,
    })
    const zeros = ['BOOLEAN', 'INTEGER', 'STRING', 'NUMBER', 'OBJECT'].map((type) => {
      const res = validateDefinition({ type })
      return res.ok && res.definition.defaultValue
    })
    expect(zeros).toEqual([false, 0, '', 0, {}])
  })

  test('valueExists rules', () => {
    expect(validateDefinition({ type: 'BOOLEAN', valueExists: true })).toMatchObject({ ok: false, problems: [{ field: 'value' }] })
    expect(validateDefinition({ type: 'BOOLEAN', valueExists: false, value: true })).toMatchObject({
      ok: false,
      problems: [{ field: 'valueExists' }],
    })
    const lenient = validateDefinition({ type: 'BOOLEAN', valueExists: false, value: true }, { valueBesideFalse: 'ignore' })
    expect(lenient).toEqual({
      ok: true,
      definition: { type: 'BOOLEAN', description: '', defaultValue: false, valueExists: false, enabled: true },
    })
  })

  test('every problem is reported at once, with the prefix', () => {
    const r = validateDefinition({ type: 'INTEGER', minValue: 'x', value: 'y', bogus: 1, maxLength: 3 }, { prefix: 'flags.a.' })
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.problems.map((p) => p.field).sort()).toEqual(['flags.a.bogus', 'flags.a.maxLength', 'flags.a.minValue', 'flags.a.value'])
  })

  test('a bad type stops further checks', () => {
    expect(validateDefinition({ type: 'FLOAT' })).toMatchObject({ ok: false, problems: [{ field: 'type' }] })
    expect(validateDefinition({})).toMatchObject({ ok: false, problems: [{ field: 'type', reason: 'required' }] })
  })
})
