/** planImport and applyPlan (docs/migrations.md): modes, kept values, collisions, and the rows written. */

import { expect, test } from 'bun:test'
import type { Flag, FlagDefinition } from '../../src/domain/flag.ts'
import { applyPlan, changedFields, type ImportMode, type ImportValues, planImport } from '../../src/domain/migration-plan.ts'

const AT = '2026-11-22T10:00:00.000Z'
const flag = (name: string, def: Partial<FlagDefinition> = {}, revision = 1): Flag => ({
  id: `flg_${name}`,
  name,
  type: 'INTEGER',
  description: '',
  defaultValue: 0,
  valueExists: false,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
  revision,
  ...def,
})
const def = (d: Partial<FlagDefinition> = {}): FlagDefinition => ({
  type: 'INTEGER',
  description: '',
  defaultValue: 0,
  valueExists: false,
  ...d,
})
const current = new Map([
  ['a', flag('a', { valueExists: true, value: 1 })],
  ['b', flag('b')],
  ['g/x', flag('g/x')],
])
const plan = (incoming: [string, FlagDefinition][], mode: ImportMode = 'merge', values: ImportValues = 'overwrite') =>
  planImport(current, new Map(incoming), mode, values)
const summary = (p: ReturnType<typeof plan>) =>
  p.changes.map((c) => `${c.action} ${c.name}${c.fields.length ? ` [${c.fields.join(',')}]` : ''}`)

test.each<[string, [string, FlagDefinition][], ImportMode, ImportValues, string[], number]>([
  [
    'merge creates and updates, leaves others',
    [
      ['a', def({ valueExists: true, value: 2 })],
      ['new', def()],
    ],
    'merge',
    'overwrite',
    ['update a [value]', 'create new [type,description,defaultValue,valueExists,enabled]'],
    0,
  ],
  ['an identical flag is unchanged', [['b', def()]], 'merge', 'overwrite', [], 1],
  ['replace also deletes what the file does not name', [['b', def()]], 'replace', 'overwrite', ['delete a', 'delete g/x'], 1],
  [
    'keep leaves the current value',
    [['a', def({ valueExists: true, value: 9, maxValue: 5 })]],
    'merge',
    'keep',
    ['update a [maxValue]'],
    0,
  ],
  ['keep leaves the absence of a value', [['b', def({ valueExists: true, value: 9 })]], 'merge', 'keep', [], 1],
  [
    'keep on a new flag takes the file value',
    [['n', def({ valueExists: true, value: 9 })]],
    'merge',
    'keep',
    ['create n [type,description,defaultValue,valueExists,value,enabled]'],
    0,
  ],
])('%s', (_name, incoming, mode, values, changes, unchanged) => {
  const p = plan(incoming, mode, values)
  expect(p.problems).toEqual([])
  expect(summary(p)).toEqual(changes)
  expect(p.unchanged).toBe(unchanged)
})

test('a kept value that breaks the new constraints is a problem naming the flag', () => {
  const p = plan([['a', def({ maxValue: 0, defaultValue: 0 })]], 'merge', 'keep')
  expect(p.problems).toEqual([{ field: 'flags.a.value', reason: expect.stringContaining('the kept value breaks the new definition') }])
})

test('merge refuses names that collide with kept flags; replace does not keep them', () => {
  expect(plan([['g', def()]]).problems.map((x) => x.field)).toEqual(['flags.g'])
  expect(plan([['a/child', def()]]).problems.map((x) => x.field)).toEqual(['flags.a/child'])
  expect(plan([['g', def()]], 'replace').problems).toEqual([])
})

test('applyPlan: new flags get fresh ids, updates keep id and createdAt and bump revision, deletes name ids', () => {
  const p = plan(
    [
      ['a', def({ valueExists: true, value: 2 })],
      ['new', def()],
    ],
    'replace',
  )
  let n = 0
  const rows = applyPlan(current, p, AT, () => `flg_new${++n}`)
  expect(rows.deleteIds).toEqual(['flg_b', 'flg_g/x'])
  expect(rows.put).toEqual([
    { id: 'flg_a', name: 'a', ...def({ valueExists: true, value: 2 }), createdAt: '2026-01-01T00:00:00.000Z', updatedAt: AT, revision: 2 },
    { id: 'flg_new1', name: 'new', ...def(), createdAt: AT, updatedAt: AT, revision: 1 },
  ])
})

test('changedFields lists differing fields in contract order', () => {
  expect(changedFields(def({ maxValue: 3, description: 'x' }), def({ value: 1, valueExists: true }))).toEqual([
    'description',
    'valueExists',
    'value',
    'maxValue',
  ])
})

test('a file that changes only rules, variants, metadata or the switch updates the flag: none of them imports as unchanged', () => {
  const ruled = new Map([['r', flag('r', { variants: { low: 1, high: 9 }, targeting: { if: [true, 'high', 'low'] } })]])
  const same = def({ variants: { low: 1, high: 9 }, targeting: { if: [true, 'high', 'low'] } })
  expect(planImport(ruled, new Map([['r', same]]), 'merge', 'overwrite').unchanged).toBe(1)
  const cases: [Partial<FlagDefinition>, string][] = [
    [{ targeting: { if: [false, 'high', 'low'] } }, 'targeting'],
    [{ variants: { low: 1, high: 8 } }, 'variants'],
    [{ metadata: { team: 'web' } }, 'metadata'],
    [{ enabled: false }, 'enabled'],
  ]
  for (const [change, field] of cases) {
    const p = planImport(ruled, new Map([['r', { ...same, ...change }]]), 'merge', 'overwrite')
    expect(p.changes.map((c) => [c.action, c.fields])).toEqual([['update', [field]]])
  }
})
