/**
 * The one check of flag and segment writes (docs/change-control.md#one-check-for-every-path), as a
 * table: what moves what a protected environment serves, and what does not.
 */

import { expect, test } from 'bun:test'
import type { ChangeRequest } from '../../src/domain/change-request.ts'
import type { Environment } from '../../src/domain/environment.ts'
import type { FlagRow } from '../../src/domain/flag-row.ts'
import type { Principal } from '../../src/domain/principal.ts'
import type { Segment } from '../../src/domain/segment.ts'
import { type GuardedChange, guardWrite } from '../../src/domain/write-guard.ts'
import { sampleEnvironment } from '../helpers/sample-environment.ts'

const at = '2026-12-01T00:00:00.000Z'
const env = (name: string, extra: Partial<Environment> = {}) => sampleEnvironment(name, extra, at)
const environments = new Map([
  ['production', env('production', { protected: true })],
  ['staging', env('staging')],
])
const segment = (rule: unknown, id = 'seg_beta'): Segment =>
  ({ id, name: 'beta', description: '', rule, createdAt: at, updatedAt: at, revision: 1 }) as Segment
const production = { valueExists: true, value: 1, targeting: { if: [{ $ref: 'beta' }, 'high', 'low'] } }
const flag: FlagRow = {
  id: 'flg_f',
  name: 'f',
  type: 'INTEGER',
  description: '',
  defaultValue: 0,
  variants: { low: 1, high: 9 },
  states: { production, staging: { valueExists: true, value: 7 } },
  createdAt: at,
  updatedAt: at,
  revision: 1,
}
const writer: Principal = { kind: 'user', userId: 'usr_w', username: 'w', sessionId: 's', permissions: ['flag:write'], flagPrefixes: [] }
const state = (flags: FlagRow[] = [flag], segments: Segment[] = [segment({ in: [1, [1]] })]) => ({
  environments,
  flags: new Map(flags.map((f) => [f.name, f])),
  segments: new Map(segments.map((s) => [s.name, s])),
})
const update = (patch: Partial<FlagRow>): GuardedChange[] => [{ table: 'flags', before: flag, after: { ...flag, ...patch, revision: 2 } }]
const guard = (changes: GuardedChange[], s = state(), changeRequest?: string) =>
  (() => {
    try {
      return guardWrite({ principal: writer, source: 'api', ...(changeRequest ? { changeRequest } : {}) }, s, changes)
    } catch (err) {
      return (err as { code: string }).code
    }
  })()

const CASES: [string, GuardedChange[], string | string[]][] = [
  ['a description', update({ description: 'words' }), []],
  ['a new variant', update({ variants: { low: 1, high: 9, mid: 5 } }), []],
  ["staging's state", update({ states: { production, staging: { valueExists: true, value: 8 } } }), []],
  ["production's value", update({ states: { ...flag.states, production: { ...production, value: 2 } } }), 'CHANGE_REQUEST_REQUIRED'],
  ["a variant's value", update({ variants: { low: 1, high: 10 } }), 'CHANGE_REQUEST_REQUIRED'],
  ['the default value', update({ defaultValue: 3 }), 'CHANGE_REQUEST_REQUIRED'],
  ['the name', update({ name: 'g' }), 'CHANGE_REQUEST_REQUIRED'],
  ['a deletion', [{ table: 'flags', before: flag, after: null }], 'CHANGE_REQUEST_REQUIRED'],
  ['a new flag with a value', [{ table: 'flags', before: null, after: { ...flag, id: 'flg_g', name: 'g' } }], 'CHANGE_REQUEST_REQUIRED'],
  [
    'a new flag disabled with no value there',
    [
      {
        table: 'flags',
        before: null,
        after: { ...flag, id: 'flg_g', name: 'g', states: { ...flag.states, production: { valueExists: false, enabled: false } } },
      },
    ],
    [],
  ],
]
// built-in variants a rule names: a BOOLEAN's true/false and an ENUM's values, re-pointed by listing them
const boolFlag: FlagRow = {
  ...flag,
  id: 'flg_b',
  name: 'b',
  type: 'BOOLEAN',
  defaultValue: false,
  variants: undefined,
  states: { production: { valueExists: true, value: true, targeting: { if: [{ '==': [{ var: 'u' }, 'vip'] }, 'true', 'false'] } } },
}
const enumFlag: FlagRow = {
  ...flag,
  id: 'flg_e',
  name: 'e',
  type: 'ENUM',
  enumValues: ['blue', 'red'],
  defaultValue: 'red',
  variants: undefined,
  states: { production: { valueExists: true, value: 'blue', targeting: { if: [true, 'blue'] } } },
}
const reList = (f: FlagRow, variants: Record<string, unknown>): GuardedChange[] => [
  { table: 'flags', before: f, after: { ...f, variants, revision: 2 } as FlagRow },
]
CASES.push(
  ["a BOOLEAN's built-in variants re-pointed by listing them", reList(boolFlag, { true: false, false: true }), 'CHANGE_REQUEST_REQUIRED'],
  ["an ENUM value's variant re-pointed", reList(enumFlag, { blue: 'red' }), 'CHANGE_REQUEST_REQUIRED'],
  // the answer without a rule (true) is reported as the first listed variant holding it: a new one takes its name
  ['a BOOLEAN given a new variant name holding the value served', reList(boolFlag, { maybe: true }), 'CHANGE_REQUEST_REQUIRED'],
  ['a BOOLEAN given a new variant name holding another value', reList(boolFlag, { never: false }), []],
)
for (const [what, changes, expected] of CASES)
  test(`${what}: ${expected === 'CHANGE_REQUEST_REQUIRED' ? 'needs a change request' : 'passes'}`, () => {
    expect(guard(changes)).toEqual(expected)
  })

test('a segment a protected rule uses: its change and its deletion are refused; a hidden duplicate of it may go', () => {
  const used = segment({ in: [1, [1]] })
  expect(guard([{ table: 'segments', before: used, after: segment({ in: [1, [2]] }) }])).toBe('CHANGE_REQUEST_REQUIRED')
  expect(guard([{ table: 'segments', before: used, after: null }], state([flag], []))).toBe('CHANGE_REQUEST_REQUIRED')
  // an older row of the same name, hidden by the current one, deleted: the name stands for the same rule
  expect(guard([{ table: 'segments', before: segment({ in: [1, [1]] }, 'seg_old'), after: null }])).toEqual([])
})

test('an approved change request applies as its author holds rights now, with no protection to bypass', () => {
  const request = {
    id: 'cr_1',
    environment: 'production',
    state: 'approved',
    author: { type: 'user', id: 'usr_w', name: 'w' },
    changes: [{ flag: 'f', set: { value: 2 } }],
    approvals: [],
  } as unknown as ChangeRequest
  const applied = (r: ChangeRequest): GuardedChange => ({ table: 'changeRequests', before: r, after: { ...r, state: 'applied' } })
  expect(
    guard([...update({ states: { ...flag.states, production: { ...production, value: 2 } } }), applied(request)], state(), 'cr_1'),
  ).toEqual([])
  // a request not being applied in this transaction waives nothing
  expect(guard(update({ states: { ...flag.states, production: { ...production, value: 2 } } }), state(), 'cr_1')).toBe(
    'CHANGE_REQUEST_REQUIRED',
  )
  const reduced = { ...writer, permissions: ['flag:read'] } as Principal
  expect(() =>
    guardWrite({ principal: reduced, source: 'api', changeRequest: 'cr_1' }, state(), [
      ...update({ states: { ...flag.states, production: { ...production, value: 2 } } }),
      applied(request),
    ]),
  ).toThrow('flag:write')
})

test('a request of an unprotected environment waives no protection: a deletion it carries is refused', () => {
  const request = {
    id: 'cr_2',
    environment: 'staging',
    state: 'approved',
    author: { type: 'user', id: 'usr_w', name: 'w' },
    changes: [{ flag: 'f', set: {}, delete: true }],
    approvals: [],
  } as unknown as ChangeRequest
  const applied: GuardedChange = { table: 'changeRequests', before: request, after: { ...request, state: 'applied' } }
  expect(guard([{ table: 'flags', before: flag, after: null }, applied], state(), 'cr_2')).toBe('CHANGE_REQUEST_REQUIRED')
})
