/** parseImportDocument (docs/migrations.md): every problem at once, FlagFlow's names, forbidden keys. */

import { expect, test } from 'bun:test'
import { buildExportDocument, exportFileName } from '../../src/domain/export-document.ts'
import { parseImportDocument } from '../../src/domain/import-document.ts'

const doc = (flags: unknown, extra: Record<string, unknown> = {}) => ({
  environment: 'e',
  version: '1.0.0',
  createdAt: '2026-11-22T10:00:00.000Z',
  flags,
  ...extra,
})
const problems = (raw: unknown) => {
  const parsed = parseImportDocument(raw)
  return parsed.ok ? [] : parsed.problems.map((p) => p.field)
}

test.each<[string, unknown, string[]]>([
  ['a valid document', doc({ a: { type: 'BOOLEAN' } }), []],
  ['not an object', [], ['body']],
  ['missing every top-level field', {}, ['environment', 'version', 'createdAt', 'flags']],
  ['an unknown top-level field', doc({}, { extra: 1 }), ['extra']],
  ['a major version other than 1', doc({}, { version: '2.0.0' }), ['version']],
  ['a version that is not semver', doc({}, { version: '1.0' }), ['version']],
  ['a createdAt that is not ISO 8601', doc({}, { createdAt: 'yesterday' }), ['createdAt']],
  ['flags that are not an object', doc([]), ['flags']],
  ['a flag that is not an object', doc({ a: 1 }), ['flags.a']],
  ['a bad name', doc({ 'a//b': { type: 'BOOLEAN' } }), ['flags.a//b']],
  ['a bad value and a missing type, both reported', doc({ a: { type: 'INTEGER', value: 'x' }, b: {} }), ['flags.a.value', 'flags.b.type']],
  ['a flag that is also a group', doc({ a: { type: 'BOOLEAN' }, 'a/b': { type: 'BOOLEAN' } }), ['flags.a']],
  [
    '__proto__ anywhere',
    JSON.parse(
      '{"environment":"e","version":"1.0.0","createdAt":"2026-11-22T10:00:00.000Z","flags":{"a":{"type":"BOOLEAN","__proto__":{}}}}',
    ),
    ['flags.a.__proto__'],
  ],
  [
    'a FlagFlow name beside its flagd name',
    doc({ s: { type: 'STRING', regExp: 'a', regexPattern: 'a', defaultValue: 'a' } }),
    ['flags.s.regExp'],
  ],
])('%s', (_name, raw, fields) => {
  expect(problems(raw)).toEqual(fields)
})

test("FlagFlow's conventions are translated", () => {
  const parsed = parseImportDocument(
    doc({
      s: { type: 'STRING', regExp: '', maxLength: 0, defaultValue: 'x', allowEmpty: true },
      t: { type: 'TAG', tagValues: ['a', 'b'], maxCount: 0, defaultValue: [] },
      ab: { type: 'AB-TEST', chanceBPercent: 25, isKillSwitch: false },
      off: { type: 'BOOLEAN', defaultValue: false, valueExists: false, value: true },
    }),
  )
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems))
  expect(Object.fromEntries(parsed.document.flags)).toEqual({
    s: { type: 'STRING', description: '', defaultValue: 'x', valueExists: false, enabled: true },
    t: { type: 'TAG', description: '', defaultValue: [], valueExists: false, enumValues: ['a', 'b'], enabled: true },
    ab: { type: 'AB-TEST', description: '', defaultValue: 'A', valueExists: false, chancePercentB: 25, enabled: true },
    off: { type: 'BOOLEAN', description: '', defaultValue: false, valueExists: false, enabled: true },
  })
})

test('an export parses back to the same definitions', () => {
  const at = new Date('2026-11-22T10:15:00.123Z')
  const flags = [
    {
      id: 'flg_1',
      name: 'x/y',
      type: 'ENUM' as const,
      description: 'd',
      defaultValue: 'a',
      valueExists: true,
      value: 'b',
      enumValues: ['a', 'b'],
      createdAt: '',
      updatedAt: '',
      revision: 3,
    },
  ]
  const exported = buildExportDocument(flags, 'prod', at)
  expect(Object.keys(exported.flags['x/y'] as object)).toEqual([
    'description',
    'type',
    'defaultValue',
    'valueExists',
    'value',
    'enumValues',
    'enabled',
  ])
  const parsed = parseImportDocument(JSON.parse(JSON.stringify(exported)))
  expect(parsed.ok && parsed.document.flags.get('x/y')).toEqual({
    type: 'ENUM',
    description: 'd',
    defaultValue: 'a',
    valueExists: true,
    value: 'b',
    enumValues: ['a', 'b'],
    enabled: true,
  })
  expect(exportFileName('prod', at)).toBe('flagd_migration_prod_20261122-101500.json')
})
