/**
 * The LaunchDarkly translator (docs/migrations.md#from-launchdarkly): what it carries, what it skips
 * and why, the weights of its percentages, the REST list's environments, and which files it takes.
 */

import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { validateDefinition } from '../../../src/domain/flag-definition.ts'
import type { ForeignTranslation } from '../../../src/domain/foreign/foreign-translation.ts'
import { isLaunchdarklyFile, translateLaunchdarkly } from '../../../src/domain/foreign/launchdarkly-translator.ts'

const FIXTURES = join(import.meta.dir, '../../fixtures/foreign/launchdarkly')
const read = async (name: string) => JSON.parse(await Bun.file(join(FIXTURES, name)).text())
const NOW = Date.parse('2026-12-01T09:00:00.000Z')

function translated(raw: unknown, sourceEnvironment?: string): ForeignTranslation {
  const t = translateLaunchdarkly(raw, { nowMs: NOW, ...(sourceEnvironment === undefined ? {} : { sourceEnvironment }) })
  if ('problems' in t) throw new Error(JSON.stringify(t.problems))
  return t
}

/** The `if` chain of a translated flag's targeting. */
const ifChain = (t: ForeignTranslation, name: string) => (t.flags[name]?.targeting as { if: unknown[] } | undefined)?.if ?? []

/** A file of SDK flag data with the given flags (each on, two boolean variations, unless given). */
const data = (flags: Record<string, Record<string, unknown>>, segments: Record<string, unknown> = {}) => ({
  flags: Object.fromEntries(
    Object.entries(flags).map(([key, f]) => [
      key,
      { key, on: true, variations: [true, false], offVariation: 1, fallthrough: { variation: 0 }, ...f },
    ]),
  ),
  segments,
})

describe('the flag data of the SDKs', () => {
  test('every flag carried passes flagd validation and says where it came from', async () => {
    const t = translated(await read('flag-data.json'))
    const segments = new Map(Object.entries(t.segments).map(([k, v]) => [k, v.rule]))
    expect(Object.keys(t.flags).length).toBe(19)
    for (const [name, flag] of Object.entries(t.flags)) {
      const { prerequisites: _, ...rest } = flag
      const result = validateDefinition(rest, { segments })
      expect(result.ok ? [] : result.problems).toEqual([])
      expect(flag.metadata).toMatchObject({ importedFrom: 'launchdarkly', originalKey: name })
    }
  })

  test('a flag that cannot be carried exactly is skipped, saying which rule and why', async () => {
    const t = translated(await read('flag-data.json'))
    const reasons = Object.fromEntries(t.skipped.map((s) => [s.name, s.reason]))
    expect(reasons).toEqual({
      'old-experiment': 'deleted or archived in LaunchDarkly',
      'internal-tools': "rule 1: the operator matches (a regular expression): flagd's rule language has none",
      'org-billing': 'rule 1: a multi-context clause (context kind "organization"): flagd\'s contexts have no kinds',
      'holiday-theme': "rule 1: the operator after with a date given as text: flagd's rules compare dates only as Unix milliseconds",
      'regex-audience': 'rule 1: the segment "admins-by-pattern", which is not carried (see its own reason)',
      'list-variations': "a variation is a JSON list or null: flagd's flags hold a boolean, a number, a text or an object",
    })
    expect(Object.keys(t.segments).sort()).toEqual(['beta-testers', 'sampled-users', 'staff'])
    expect(t.warnings.filter((w) => w.field.startsWith('segments.')).map((w) => w.field)).toEqual(['segments.admins-by-pattern'])
  })

  test('percentages keep their weights per 100,000 exactly, and say once that the buckets hold other contexts', async () => {
    const t = translated(await read('flag-data.json'))
    expect(t.warnings.filter((w) => w.field === 'percentages')).toHaveLength(1)
    const ifs = (name: string) => ifChain(t, name)
    expect(ifs('new-checkout').at(-1)).toEqual({
      if: [
        { '===': [{ var: 'targetingKey' }, null] },
        'true',
        { fractional: [{ cat: ['new-checkout.', { var: 'targetingKey' }] }, ['true', 25_000], ['false', 75_000]] },
      ],
    })
    expect(ifs('pricing-page').at(-1)).toMatchObject({
      if: [{}, 'control', { fractional: [{}, ['control', 33_333], ['annual-first', 33_333], ['monthly-first', 33_334]] }],
    })
    // bucketBy another attribute: the split is by it, and a context without it gets LaunchDarkly's bucket 0
    expect(t.flags['company-rollout']?.targeting).toEqual({
      if: [
        { '===': [{ var: 'company' }, null] },
        'true',
        { fractional: [{ cat: ['company-rollout.', { var: 'company' }] }, ['true', 40_000], ['false', 60_000]] },
      ],
    })
    // 100 % is a constant
    expect(t.flags['full-rollout']).toMatchObject({ value: true })
    expect(t.flags['full-rollout']?.targeting).toBeUndefined()
  })

  test('weights that do not add up to 100,000 split as LaunchDarkly does: what is left goes to the last, what is over is never reached', () => {
    const rollout = (weights: number[]) => ({
      variations: ['a', 'b', 'c'],
      fallthrough: { rollout: { variations: weights.map((weight, variation) => ({ variation, weight })) } },
    })
    const t = translated(
      data({ under: rollout([10_000, 20_000, 30_000]), over: rollout([60_000, 60_000, 5_000]), none: rollout([0, 0, 0]) }),
    )
    const split = (name: string) => (ifChain(t, name)[2] as { fractional: unknown[] }).fractional.slice(1)
    expect(split('under')).toEqual([
      ['a', 10_000],
      ['b', 20_000],
      ['c', 70_000],
    ])
    expect(split('over')).toEqual([
      ['a', 60_000],
      ['b', 40_000],
    ])
    expect(t.flags.none).toMatchObject({ value: 'c' })
  })

  test('off serves the off variation; off without one is disabled, its rules kept for when it is enabled', async () => {
    const t = translated(await read('flag-data.json'))
    expect(t.flags['payments-kill-switch']).toMatchObject({ value: false })
    expect(t.flags['payments-kill-switch']?.targeting).toBeUndefined()
    expect(t.flags['payments-kill-switch']?.enabled).toBeUndefined()
    expect(t.flags['legacy-search']).toMatchObject({ enabled: false, defaultValue: null })
    expect(t.flags['legacy-search']?.targeting).toBeDefined()
  })

  test('a prerequisite names the flag and the variant LaunchDarkly requires', async () => {
    const t = translated(await read('flag-data.json'))
    expect(t.flags['one-click-buy']?.prerequisites).toEqual([{ flag: 'new-checkout', variants: ['true'] }])
    expect(t.flags['search-v2']?.prerequisites).toEqual([{ flag: 'legacy-search', variants: ['elastic'] }])
    // a prerequisite failing serves the off variation: the flag's value
    expect(t.flags['one-click-buy']).toMatchObject({ value: false })
  })

  test('a prerequisite flagd would judge otherwise, or that is not carried, skips the flag that needs it', () => {
    const t = translated(
      data({
        offServingIt: { on: false, offVariation: 0 },
        needsOff: { prerequisites: [{ key: 'offServingIt', variation: 0 }] },
        twins: { variations: ['x', 'x', 'y'], offVariation: 2 },
        needsTwin: { prerequisites: [{ key: 'twins', variation: 0 }] },
        needsGhost: { prerequisites: [{ key: 'ghost', variation: 0 }] },
        regex: { rules: [{ variation: 0, clauses: [{ attribute: 'email', op: 'matches', values: ['x'] }] }] },
        needsRegex: { prerequisites: [{ key: 'regex', variation: 0 }] },
        needsNeedsRegex: { prerequisites: [{ key: 'needsRegex', variation: 0 }] },
      }),
    )
    const reasons = Object.fromEntries(t.skipped.map((s) => [s.name, s.reason]))
    expect(reasons.needsOff).toBe(
      'its prerequisite offServingIt is off and serves the required variation: LaunchDarkly never counts an off prerequisite, flagd would',
    )
    expect(reasons.needsTwin).toBe(
      "its prerequisite twins has two variations of the value it requires, which flagd's prerequisites cannot tell apart",
    )
    expect(reasons.needsGhost).toBe('its prerequisite ghost is not in the file')
    expect(reasons.needsRegex).toBe('its prerequisite regex is not carried (see its own reason)')
    expect(reasons.needsNeedsRegex).toBe('its prerequisite needsRegex is not carried (see its own reason)')
    expect(Object.keys(t.flags).sort()).toEqual(['offServingIt', 'twins'])
  })

  test('every operator becomes its flagd counterpart, a missing attribute matching nothing even negated', () => {
    const clause = (op: string, values: unknown[], negate = false) =>
      data({ f: { rules: [{ variation: 1, clauses: [{ attribute: 'a', op, values, negate }] }] } })
    const rule = (op: string, values: unknown[], negate = false) =>
      (ifChain(translated(clause(op, values, negate)), 'f')[0] as { and: unknown[] }).and
    const a = { var: 'a' }
    const present = { '!==': [a, null] }
    expect(rule('in', ['x', 2, true, { o: 1 }])).toEqual([present, { in: [a, ['x', 2, true]] }])
    expect(rule('startsWith', ['p'])).toEqual([present, { starts_with: [a, 'p'] }])
    expect(rule('endsWith', ['p', 'q'])).toEqual([present, { or: [{ ends_with: [a, 'p'] }, { ends_with: [a, 'q'] }] }])
    expect(rule('contains', ['p'], true)).toEqual([present, { '!': { in: ['p', { cat: [a] }] } }])
    expect(rule('lessThanOrEqual', [3, '4'])).toEqual([present, { '<=': [a, 3] }])
    expect(rule('before', [1_700_000_000_000])).toEqual([present, { '<': [a, 1_700_000_000_000] }])
    expect(rule('semVerEqual', ['1.2', 'v1.3.0', '1.4.0-rc.1+b5'])).toEqual([
      present,
      { or: [{ sem_ver: [a, '=', '1.2.0'] }, { sem_ver: [a, '=', '1.4.0-rc.1+b5'] }] },
    ])
    expect(rule('greaterThan', ['x'])).toEqual([present, false])
  })

  test('the context key is targetingKey; attribute references with a context kind are paths', () => {
    const t = translated(
      data({
        f: {
          rules: [
            { variation: 1, clauses: [{ attribute: 'key', op: 'in', values: ['u'] }] },
            { variation: 1, clauses: [{ contextKind: 'user', attribute: '/address/city', op: 'in', values: ['Oslo'] }] },
          ],
        },
        dotted: { rules: [{ variation: 1, clauses: [{ attribute: 'a.b', op: 'in', values: ['x'] }] }] },
      }),
    )
    const ifs = ifChain(t, 'f')
    expect(ifs[0]).toEqual({ and: [{ '!==': [{ var: 'targetingKey' }, null] }, { in: [{ var: 'targetingKey' }, ['u']] }] })
    expect(ifs[2]).toEqual({ and: [{ '!==': [{ var: 'address.city' }, null] }, { in: [{ var: 'address.city' }, ['Oslo']] }] })
    expect(t.skipped).toEqual([
      { name: 'dotted', reason: `rule 1: the attribute "a.b": flagd's rules read a "." as a path into the context` },
    ])
  })
})

describe("the REST API's flag list", () => {
  test('reads the first environment by default and says so; variation names kept where they are valid', async () => {
    const t = translated(await read('rest-flags.json'))
    expect(t.warnings[0]).toEqual({
      field: 'sourceEnvironment',
      reason: 'flags read from the LaunchDarkly environment "production" (the first in the file); the file has: production, test',
    })
    expect(t.flags['dark-mode']).toMatchObject({
      type: 'BOOLEAN',
      description: 'Lets users switch the UI to dark colours',
      variants: { Enabled: true, Disabled: false },
      value: false,
      tags: ['ui', 'team:web'],
    })
    expect(t.flags['checkout-flow']).toMatchObject({
      type: 'STRING',
      description: 'Checkout flow',
      variants: { classic: 'classic', 'one-page': 'one-page', wizard: 'wizard' },
      prerequisites: [{ flag: 'dark-mode', variants: ['Enabled'] }],
    })
  })

  test('?sourceEnvironment= chooses another environment; one the file lacks makes the file unreadable', async () => {
    const raw = await read('rest-flags.json')
    const t = translated(raw, 'test')
    expect(t.flags['dark-mode']).toMatchObject({ value: true })
    expect(t.flags['checkout-flow']).toMatchObject({ value: 'wizard' })
    expect(translateLaunchdarkly(raw.items, { nowMs: NOW, sourceEnvironment: 'staging' })).toEqual({
      problems: [{ field: 'sourceEnvironment', reason: 'no environment "staging" in the file (it has: production, test)' }],
    })
  })
})

describe('which files are LaunchDarkly files', () => {
  test("its SDK flag data and its REST list are; a migration file, a FlagFlow or flagd file and the other tools' are not", async () => {
    expect(isLaunchdarklyFile(await read('flag-data.json'))).toBe(true)
    expect(isLaunchdarklyFile(await read('rest-flags.json'))).toBe(true)
    expect(isLaunchdarklyFile((await read('rest-flags.json')).items)).toBe(true)
    expect(isLaunchdarklyFile({ flagValues: { a: 1 } })).toBe(true)
    const flagflow = JSON.parse(await Bun.file(join(import.meta.dir, '../../fixtures/flagflow-1.7-export.json')).text())
    expect(isLaunchdarklyFile(flagflow)).toBe(false)
    expect(isLaunchdarklyFile({ environment: 'e', version: '1.0.0', createdAt: '2026-12-01T09:00:00Z', flags: {} })).toBe(false)
    const flagd = {
      $schema: 'https://flagd.dev/schema/v0/flags.json',
      flags: { a: { state: 'ENABLED', variants: { on: true }, defaultVariant: 'on' } },
    }
    expect(isLaunchdarklyFile(flagd)).toBe(false)
    expect(isLaunchdarklyFile({ version: 1, features: [], featureStrategies: [], featureEnvironments: [] })).toBe(false)
    expect(isLaunchdarklyFile({ version: '1.4', namespace: 'default', flags: [{ key: 'a', type: 'BOOLEAN_FLAG_TYPE' }] })).toBe(false)
    expect(isLaunchdarklyFile({ 'my-flag': { variations: { on: true, off: false }, defaultRule: { variation: 'on' } } })).toBe(false)
    expect(isLaunchdarklyFile({ flags: { a: { variations: { on: true }, defaultRule: { variation: 'on' } } } })).toBe(false)
    expect(isLaunchdarklyFile([])).toBe(false)
    expect(isLaunchdarklyFile(null)).toBe(false)
  })

  test('a file of neither shape is refused as a whole', () => {
    expect(translateLaunchdarkly({ features: [] }, { nowMs: NOW })).toMatchObject({ problems: [{ field: 'body' }] })
  })
})

test("a context without the bucketing attribute gets the first entry with a weight, LaunchDarkly's bucket 0", () => {
  const t = translated(
    data({
      f: {
        variations: ['a', 'b'],
        fallthrough: {
          rollout: {
            variations: [
              { variation: 0, weight: 0 },
              { variation: 1, weight: 50_000 },
              { variation: 0, weight: 50_000 },
            ],
          },
        },
      },
    }),
  )
  expect(ifChain(t, 'f')[1]).toBe('b')
  expect((ifChain(t, 'f')[2] as { fractional: unknown[] }).fractional.slice(1)).toEqual([
    ['a', 50_000],
    ['b', 50_000],
  ])
})

test('what a carried flag leaves behind is said: the rules of a flag that is off, the tags flagd cannot hold', async () => {
  const sdk = translated(await read('flag-data.json'))
  expect(sdk.warnings).toContainEqual({
    field: 'flags.payments-kill-switch.targeting',
    reason: 'off in LaunchDarkly, so imported serving its off variation: its targets and rules are not carried',
  })
  expect(sdk.warnings.filter((w) => w.field.endsWith('.targeting'))).toHaveLength(1)
  const rest = translated(await read('rest-flags.json'))
  expect(rest.warnings).toContainEqual({ field: 'flags.dark-mode.tags', reason: 'left out, as flagd cannot hold them: "needs review!"' })
})

test('a segment rule that takes a percentage of the contexts it matches keeps its weight, split by the segment', async () => {
  const t = translated(await read('flag-data.json'))
  const country = { var: 'country' }
  const key = { var: 'targetingKey' }
  expect(t.segments['sampled-users']?.rule).toEqual({
    and: [
      { '!==': [country, null] },
      { in: [country, ['US']] },
      { or: [{ '===': [key, null] }, { fractional: [{ cat: ['sampled-users.', key] }, [true, 10_000], [false, 90_000]] }] },
    ],
  })
  expect(t.flags['us-sample-banner']).toBeDefined()
})

test('a flag using a segment the file does not hold is skipped, saying so', () => {
  const t = translated(data({ f: { rules: [{ variation: 1, clauses: [{ attribute: '', op: 'segmentMatch', values: ['ghost'] }] }] } }))
  expect(t.skipped).toEqual([{ name: 'f', reason: 'rule 1: the segment "ghost" is not in the file' }])
})

test('a flag that is off with an off variation is carried whatever its rules say: they are never served', () => {
  const t = translated(
    data({ f: { on: false, rules: [{ variation: 0, clauses: [{ attribute: 'email', op: 'matches', values: ['x'] }] }] } }),
  )
  expect(t.skipped).toEqual([])
  expect(t.flags.f).toMatchObject({ value: false })
  expect(t.warnings.map((w) => w.field)).toEqual(['flags.f.targeting'])
})
