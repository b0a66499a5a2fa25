/** GO Feature Flag's flag file translated (docs/migrations.md#from-go-feature-flag): each flag kept exactly or skipped with the reason. */

import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { validateDefinition } from '../../../src/domain/flag-definition.ts'
import type { ForeignTranslation } from '../../../src/domain/foreign/foreign-translation.ts'
import { isGoFeatureFlagFile, translateGoFeatureFlag } from '../../../src/domain/foreign/gofeatureflag-translator.ts'
import { parseImportDocument } from '../../../src/domain/import-document.ts'

const NOW = Date.parse('2026-12-07T12:00:00Z')
const fixture = (name: string) => Bun.YAML.parse(readFileSync(join(import.meta.dir, '../../fixtures/foreign/gofeatureflag', name), 'utf8'))
const translate = (raw: unknown, nowMs = NOW) => translateGoFeatureFlag(raw, { nowMs }) as ForeignTranslation
const one = (flag: Record<string, unknown>, nowMs = NOW) => translate({ f: flag }, nowMs)
const skipReason = (flag: Record<string, unknown>) => one(flag).skipped[0]?.reason
const bool = { variations: { on: true, off: false } }

describe('the fixture file', () => {
  const t = translate(fixture('flags.goff.yaml'))

  test('every imported flag passes the daemon’s validation, and the file is a valid migration document', () => {
    for (const [name, flag] of Object.entries(t.flags)) {
      const checked = validateDefinition(flag)
      expect(checked.ok ? [] : checked.problems).toEqual([])
      expect(flag.metadata).toMatchObject({ originalKey: name, importedFrom: 'gofeatureflag' })
    }
    const doc = { environment: 'production', version: '1.0.0', createdAt: new Date(NOW).toISOString(), flags: t.flags }
    const parsed = parseImportDocument(doc)
    expect(parsed.ok ? [] : parsed.problems).toEqual([])
  })

  test('what cannot be kept is skipped, each with its reason', () => {
    expect(Object.fromEntries(t.skipped.map((s) => [s.name, s.reason]))).toEqual({
      'email-domain': expect.stringContaining('ignoring case'),
      'regex-rule': expect.stringContaining('orders text ignoring case'),
      'broken-query': 'targeting[0].query: at 11: expected a value after "eq"',
      'mixed-types': 'the variations mix types (INTEGER, STRING)',
      'list-values': 'a variation is a list, and no flagd type serves any list',
      'jsonlogic-query': expect.stringContaining('JsonLogic query'),
    })
  })

  test('one warning about percentages, one about trackEvents', () => {
    expect(t.warnings.map((w) => w.field)).toEqual(['percentages', 'trackEvents'])
  })

  test('the description comes from metadata, the other metadata is kept', () => {
    expect(t.flags['new-checkout']).toMatchObject({
      type: 'BOOLEAN',
      description: 'The new checkout flow',
      metadata: { team: 'payments', 'issue-link': 'https://example.com/issues/42' },
    })
  })

  test('a past scheduled step is applied, a future one becomes a scheduled change', () => {
    expect(JSON.stringify(t.flags['price-factor']?.targeting)).toContain('vip')
    expect(t.scheduled).toEqual([{ flag: 'price-factor', at: '2027-01-15T00:00:00.000Z', changes: { enabled: false } }])
  })

  test('disable: true imports the flag disabled; a progressive default rule becomes a rollout', () => {
    expect(t.flags['legacy-api']).toMatchObject({ enabled: false, value: true })
    expect(t.flags['ramp-up']?.rollout).toEqual({
      variant: 'new',
      start: '2026-12-01T00:00:00.000Z',
      end: '2026-12-31T00:00:00.000Z',
      fromPercent: 0,
      toPercent: 100,
    })
  })
})

test('percentages keep their sizes per 100,000, as the tool cuts them', () => {
  const t = one({ ...bool, defaultRule: { percentage: { on: 33.333, off: 66.667 } } })
  expect(t.flags.f?.targeting).toEqual({
    if: [
      { var: 'targetingKey' },
      {
        fractional: [
          ['on', 33333],
          ['off', 66667],
        ],
      },
      null,
    ],
  })
  expect(t.warnings).toHaveLength(1)
})

test('a 100 % split is a constant', () => {
  const t = one({ ...bool, defaultRule: { percentage: { on: 100, off: 0 } } })
  expect(t.flags.f?.targeting).toEqual({ if: [{ var: 'targetingKey' }, 'on', null] })
})

test.each<[string, Record<string, unknown>, string]>([
  [
    'a rule without a query',
    { ...bool, targeting: [{ variation: 'on' }], defaultRule: { variation: 'off' } },
    'targeting[0]: has no query',
  ],
  ['an unknown variation', { ...bool, defaultRule: { variation: 'maybe' } }, 'defaultRule: serves variation "maybe"'],
  ['no default rule', { ...bool }, 'has no defaultRule'],
  [
    'a progressive rollout in a targeting rule',
    { ...bool, targeting: [{ query: 'a eq 1', progressiveRollout: {} }], defaultRule: { variation: 'off' } },
    'inside a targeting rule',
  ],
  [
    'a rollout starting above 0 % in the future',
    {
      ...bool,
      defaultRule: {
        progressiveRollout: {
          initial: { variation: 'off', percentage: 10, date: '2027-01-01T00:00:00Z' },
          end: { variation: 'on', percentage: 100, date: '2027-02-01T00:00:00Z' },
        },
      },
    },
    'starts at 10 %',
  ],
  [
    'an integer compared with co',
    { ...bool, targeting: [{ query: 'age co 3', variation: 'on' }], defaultRule: { variation: 'off' } },
    '"co" is not an operation on integers',
  ],
  [
    'a future step that breaks the flag',
    {
      ...bool,
      defaultRule: { variation: 'off' },
      scheduledRollout: [{ date: '2027-01-01T00:00:00Z', targeting: [{ query: 'a eq', variation: 'on' }] }],
    },
    'scheduledRollout step of 2027-01-01T00:00:00.000Z: targeting[0].query: at 5',
  ],
])('skipped: %s', (_, flag, reason) => {
  expect(skipReason(flag)).toContain(reason)
})

test('the experimentation window answers the application’s default outside it', () => {
  const t = one({
    ...bool,
    experimentation: { start: '2026-12-01T00:00:00Z', end: '2026-12-31T00:00:00Z' },
    defaultRule: { variation: 'on' },
  })
  expect(t.flags.f).toMatchObject({ valueExists: false })
  expect(t.flags.f?.targeting).toEqual({
    if: [{ and: [{ '>=': [{ var: '$flagd.timestamp' }, 1796083200] }, { '<=': [{ var: '$flagd.timestamp' }, 1798675200] }] }, 'on', null],
  })
})

test('types come from the variations', () => {
  const typeOf = (variations: Record<string, unknown>) =>
    one({ variations, defaultRule: { variation: Object.keys(variations)[0] } }).flags.f?.type
  expect([typeOf({ a: 1, b: 2 }), typeOf({ a: 1, b: 2.5 }), typeOf({ a: 'x' }), typeOf({ a: { x: 1 } }), typeOf({ a: false })]).toEqual([
    'INTEGER',
    'NUMBER',
    'STRING',
    'OBJECT',
    'BOOLEAN',
  ])
})

test('the file is recognised by its content, and other files are not', () => {
  expect(isGoFeatureFlagFile(fixture('flags.goff.yaml'))).toBe(true)
  const others: unknown[] = [
    { environment: 'e', version: '1.0.0', createdAt: '2026-01-01T00:00:00Z', flags: { a: { type: 'BOOLEAN' } } },
    { flags: { a: { state: 'ENABLED', variants: { on: true }, defaultVariant: 'on' } } },
    { flags: { a: { key: 'a', variations: [true, false], on: true } }, segments: {} },
    { version: '1.2', namespace: 'default', flags: [{ key: 'a', variants: [] }] },
    { version: 1, features: [{ name: 'a' }], featureStrategies: [] },
    {},
    [],
  ]
  for (const other of others) expect(isGoFeatureFlagFile(other)).toBe(false)
})

test('a file that is not an object of flags is refused as a whole', () => {
  expect(translateGoFeatureFlag([], { nowMs: NOW })).toEqual({ problems: [expect.objectContaining({ field: '' })] })
})

test('a flag flagd’s own validation refuses is skipped with its problems, not imported', () => {
  const t = one({ variations: { a: 'x'.repeat(2_000_000), b: 'y' }, defaultRule: { variation: 'b' } })
  expect(t.flags).toEqual({})
  expect(t.skipped[0]?.reason).toStartWith('flagd refuses the translation: ')
})

test('scheduled steps merge as the tool merges them: rules by name, percentages per variation, in date order', () => {
  const t = one({
    variations: { a: 'a', b: 'b', c: 'c' },
    targeting: [{ name: 'vip', query: 'vip eq true', variation: 'b' }],
    defaultRule: { percentage: { a: 50, b: 50 } },
    scheduledRollout: [
      { date: '2027-03-01T00:00:00Z', defaultRule: { percentage: { b: -1, c: 50 } } },
      {
        date: '2026-11-01T00:00:00Z',
        targeting: [
          { name: 'vip', variation: 'c' },
          { query: 'beta eq true', variation: 'a' },
        ],
      },
      { date: '2027-02-01T00:00:00Z', targeting: [{ name: 'vip', disable: true }] },
    ],
  })
  const rule = (split: unknown, ...branches: unknown[]) => ({ if: [{ var: 'targetingKey' }, { if: [...branches, split] }, null] })
  const vip = { '===': [{ var: 'vip' }, true] }
  const beta = { '===': [{ var: 'beta' }, true] }
  expect(t.flags.f?.targeting).toEqual(
    rule(
      {
        fractional: [
          ['b', 50000],
          ['a', 50000],
        ],
      },
      vip,
      'c',
      beta,
      'a',
    ),
  )
  expect(t.scheduled).toEqual([
    {
      flag: 'f',
      at: '2027-02-01T00:00:00.000Z',
      changes: {
        targeting: rule(
          {
            fractional: [
              ['b', 50000],
              ['a', 50000],
            ],
          },
          beta,
          'a',
        ),
      },
    },
    {
      flag: 'f',
      at: '2027-03-01T00:00:00.000Z',
      changes: {
        targeting: rule(
          {
            fractional: [
              ['c', 50000],
              ['a', 50000],
            ],
          },
          beta,
          'a',
        ),
      },
    },
  ])
})

test('a bucketing key is the rollout’s attribute, and contexts without it get the application’s default', () => {
  const t = one({
    ...bool,
    bucketingKey: 'companyId',
    defaultRule: {
      progressiveRollout: {
        initial: { variation: 'off', date: '2026-12-01T00:00:00Z' },
        end: { variation: 'on', date: '2026-12-02T00:00:00Z' },
      },
    },
  })
  expect(t.flags.f).toMatchObject({
    valueExists: false,
    targeting: { if: [{ var: 'companyId' }, 'off', null] },
    rollout: { variant: 'on', by: 'companyId', toPercent: 100 },
  })
})

test('a TOML file, whose dates the reader gives as instants, translates like YAML', () => {
  const raw = Bun.TOML.parse(readFileSync(join(import.meta.dir, '../../fixtures/foreign/gofeatureflag/flags.goff.toml'), 'utf8'))
  expect(isGoFeatureFlagFile(raw)).toBe(true)
  const t = translate(raw)
  expect(t.skipped).toEqual([])
  expect(t.flags['ramp-up']?.rollout).toMatchObject({ start: '2026-12-01T00:00:00.000Z', end: '2026-12-31T00:00:00.000Z' })
  expect(t.scheduled).toEqual([{ flag: 'ramp-up', at: '2027-01-10T00:00:00.000Z', changes: { enabled: false } }])
  expect(t.flags['country-gate']?.targeting).toEqual({ if: [{ in: [{ var: 'country' }, ['FR', 'DE', 'IT']] }, 'inside', 'outside'] })
})
