/**
 * A flag's prerequisites resolved once per snapshot (docs/performance.md#prerequisites-made-nearly-free):
 * what is decided without a context, which variants of a ruled flag satisfy, which required flags
 * two paths reach, and a cycle (refused on write) read as a flag that does not exist.
 */

import { expect, test } from 'bun:test'
import type { Flag } from '../../src/domain/flag.ts'
import { planPrerequisites, type Requirement } from '../../src/domain/prerequisite-plan.ts'

const flag = (name: string, fields: Partial<Flag> = {}): Flag =>
  ({ id: name, name, type: 'BOOLEAN', revision: 1, valueExists: true, value: true, ...fields }) as Flag
const requires = (...names: string[]) => ({ prerequisites: names.map((n) => ({ flag: n, variants: ['true', 'on'] })) })
const byName = (...flags: Flag[]) => new Map(flags.map((f) => [f.name, f]))
const summary = (r: Requirement) => ({ flag: r.prerequisite.flag, found: r.node !== undefined, decided: r.decided, slot: r.node?.slot })

test('a chain without rules or splits is decided: held, not held, disabled, missing', () => {
  const flags = byName(
    flag('on'),
    flag('off', { value: false }),
    flag('disabled', { enabled: false }),
    flag('mid', requires('on')),
    flag('top', requires('on', 'off', 'disabled', 'mid', 'gone')),
  )
  const plan = planPrerequisites(flags.get('top') as Flag, flags)
  expect(plan.requires.map(summary)).toEqual([
    { flag: 'on', found: true, decided: true, slot: 0 }, // reached again through mid
    { flag: 'off', found: true, decided: false, slot: -1 },
    { flag: 'disabled', found: true, decided: false, slot: -1 },
    { flag: 'mid', found: true, decided: true, slot: -1 },
    { flag: 'gone', found: false, decided: false, slot: undefined },
  ])
  expect(plan.slots).toBe(1)
})

test('a rule, a split, or an undecided chain below leaves it to the context; a ruled flag knows its satisfying variants', () => {
  const ruled = flag('ruled', { variants: { on: true, off: false, maybe: 'x' as never }, targeting: { var: 'v' } })
  const split = flag('split', { type: 'AB-TEST', valueExists: false, value: undefined })
  const flags = byName(ruled, split, flag('above', requires('ruled')), flag('top', requires('ruled', 'split', 'above')))
  const plan = planPrerequisites(flags.get('top') as Flag, flags)
  expect(plan.requires.map((r) => r.decided)).toEqual([undefined, undefined, undefined])
  // "true" and "on" both name the value true: the variants whose value is true satisfy
  expect([...(plan.requires[0]?.satisfiedBy ?? [])].sort()).toEqual(['on', 'true'])
  expect(plan.requires[0]?.node?.ruled).toBe(true)
})

test('a cycle, which a write refuses, ends where it closes: read as a flag that does not exist', () => {
  const flags = byName(flag('a', requires('b')), flag('b', requires('a')))
  const plan = planPrerequisites(flags.get('a') as Flag, flags)
  const b = plan.requires[0]
  expect(b?.node?.flag.name).toBe('b')
  expect(b?.node?.requires.map(summary)).toEqual([{ flag: 'a', found: false, decided: false, slot: undefined }])
  // b's own prerequisite fails, so b gives its default: its value, true, which a flag without a rule gives either way
  expect(b?.decided).toBe(true)
})
