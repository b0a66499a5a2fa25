/**
 * The import from Unleash (docs/migrations.md#from-unleash): which features of a realistic Unleash 5
 * export are carried and how, which are skipped and why, and that every carried flag passes the
 * daemon's own validation.
 */

import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { validateDefinition } from '../../../src/domain/flag-definition.ts'
import type { ForeignTranslation } from '../../../src/domain/foreign/foreign-translation.ts'
import { isUnleashFile, translateUnleash } from '../../../src/domain/foreign/unleash-translator.ts'

const FIXTURES = join(import.meta.dir, '../../fixtures')
const file = () => JSON.parse(readFileSync(join(FIXTURES, 'foreign/unleash/export.json'), 'utf8'))
const NOW = Date.parse('2026-12-07T12:00:00Z')
const translate = (raw: unknown = file(), sourceEnvironment?: string) =>
  translateUnleash(raw, { nowMs: NOW, sourceEnvironment }) as ForeignTranslation

describe('recognising the file', () => {
  test("Unleash's export is recognised by its content", () => {
    expect(isUnleashFile(file())).toBe(true)
  })
  test.each([
    ['a migration file', JSON.parse(readFileSync(join(FIXTURES, 'valid-merge.json'), 'utf8'))],
    ['a FlagFlow file', JSON.parse(readFileSync(join(FIXTURES, 'flagflow-1.7-export.json'), 'utf8'))],
    [
      'a flagd document',
      {
        $schema: 'https://flagd.dev/schema/v0/flags.json',
        flags: { a: { state: 'ENABLED', variants: { on: true }, defaultVariant: 'on' } },
      },
    ],
    ["LaunchDarkly's flag data", { flags: { a: { key: 'a', on: true, variations: [true, false] } }, segments: {} }],
    ["LaunchDarkly's REST list", { items: [{ key: 'a', environments: { production: {} } }] }],
    ['a Flipt export', { version: '1.4', namespace: 'default', flags: [{ key: 'a', type: 'BOOLEAN_FLAG_TYPE' }], segments: [] }],
    ['a GO Feature Flag file', { features: { variations: { on: true }, defaultRule: { variation: 'on' } } }],
    ['nothing at all', null],
  ])('%s is not', (_, raw) => {
    expect(isUnleashFile(raw)).toBe(false)
  })
})

describe('translating', () => {
  test('every carried flag passes validation and names where it came from', () => {
    const t = translate()
    const segments = new Map(Object.entries(t.segments).map(([n, s]) => [n, s.rule]))
    expect(Object.keys(t.flags).length).toBeGreaterThan(15)
    for (const [name, flag] of Object.entries(t.flags)) {
      const { prerequisites: _, ...rest } = flag
      const checked = validateDefinition(rest, { segments })
      expect({ name, ok: checked.ok }).toEqual({ name, ok: true })
      expect(flag.metadata).toMatchObject({ originalKey: name, importedFrom: 'unleash' })
    }
  })

  test('what cannot be kept exactly is skipped, each with the reason', () => {
    const reasons = Object.fromEntries(translate().skipped.map((s) => [s.name, s.reason]))
    expect(reasons).toEqual({
      'hosts.canary': expect.stringContaining('applicationHostname'),
      'custom.region': expect.stringContaining('custom strategy regionStrategy'),
      'search.case-blind': expect.stringContaining('case-insensitive'),
      'billing.trial-end': expect.stringContaining('trialEnds, a date given as text'),
      'network.office': expect.stringContaining('10.0.0.0/8'),
      'marketing.eu-audience': expect.stringContaining(
        "segment eu audience: the file does not hold its constraints (Unleash's export names segments only): add them from Unleash's GET /api/admin/segments",
      ),
      'checkout.upsell-child': expect.stringContaining('depends on custom.region, which is skipped'),
    })
  })

  test('the environment imported and the percentages are each said once', () => {
    const t = translate()
    expect(t.warnings.filter((w) => w.field === 'percentages')).toHaveLength(1)
    expect(t.warnings).toContainEqual({ field: 'sourceEnvironment', reason: expect.stringContaining('production, the first in the file') })
    expect(t.scheduled).toEqual([])
  })

  test('a rollout keeps its percentage exactly, bucketed within its group', () => {
    const flag = translate().flags['checkout.new-flow']
    expect(flag).toMatchObject({
      type: 'BOOLEAN',
      defaultValue: false,
      value: false,
      description: 'New checkout flow',
      tags: ['simple:checkout', 'team:payments'],
    })
    const key = { cat: ['checkout.new-flow', ':', { or: [{ var: 'targetingKey' }, { var: 'sessionId' }, ''] }] }
    expect(flag?.targeting).toEqual({ if: [{ '==': [{ fractional: [key, [1, 25], [0, 75]] }, 1] }, 'true', 'false'] })
  })

  test("variants keep their names, payloads and weights; the feature's type becomes the kind", () => {
    const t = translate()
    expect(t.flags['search.engine']).toMatchObject({
      type: 'STRING',
      defaultValue: null,
      variants: { elastic: 'elasticsearch', solr: 'solr', typesense: 'typesense' },
    })
    expect(JSON.stringify(t.flags['search.engine']?.targeting)).toContain('["elastic",500],["solr",300],["typesense",200]')
    expect(t.flags['ui.theme']).toMatchObject({
      type: 'OBJECT',
      kind: 'experiment',
      variants: { dark: { background: '#111', text: '#eee' } },
    })
    expect(t.flags['limits.max-items']).toMatchObject({ type: 'NUMBER', variants: { small: 10, large: 50 } })
  })

  test('dependencies become prerequisites on the parent\'s "true" or its variants', () => {
    const t = translate()
    expect(t.flags['checkout.express-banner']?.prerequisites).toEqual([{ flag: 'checkout.express', variants: ['true'] }])
    expect(t.flags['search.engine-beta']?.prerequisites).toEqual([{ flag: 'search.engine', variants: ['solr', 'typesense'] }])
  })

  test('a feature off in the environment answers as Unleash does: false, its strategies not carried (said)', () => {
    const t = translate()
    expect(t.flags['ops.maintenance-banner']).toMatchObject({ type: 'BOOLEAN', value: false })
    expect(t.flags['ops.maintenance-banner']?.targeting).toBeUndefined()
    expect(t.warnings).toContainEqual({ field: 'flags.ops.maintenance-banner', reason: expect.stringContaining('off in the environment') })
  })

  test('only the segments used by carried flags come along', () => {
    expect(Object.keys(translate().segments)).toEqual(['staff_network'])
  })

  test('an environment the file does not have is refused, naming those it has', () => {
    expect(translateUnleash(file(), { nowMs: NOW, sourceEnvironment: 'staging' })).toEqual({
      problems: [{ field: 'sourceEnvironment', reason: 'the file has no environment staging; it has production' }],
    })
  })

  test('a file that is not an export, or a feature without a name, is refused whole', () => {
    expect(translateUnleash({ features: {} }, { nowMs: NOW })).toMatchObject({ problems: [{ field: 'body' }] })
    expect(translateUnleash({ features: [{ type: 'release' }], featureStrategies: [] }, { nowMs: NOW })).toEqual({
      problems: [{ field: 'features[0]', reason: 'must be an object with a name' }],
    })
  })
})

describe('reserved names', () => {
  test('a variant named __proto__ skips its feature; a segment so named keeps its id', () => {
    const raw = file()
    raw.featureEnvironments.find((e: { name: string }) => e.name === 'search.engine').variants[0].name = '__proto__'
    raw.segments[0].name = '__proto__'
    const t = translate(raw)
    expect(t.skipped).toContainEqual({ name: 'search.engine', reason: 'variant name __proto__ is reserved in JSON documents' })
    expect(Object.keys(t.segments)).toEqual(['segment_proto___1'])
    expect(Object.hasOwn(t.segments, '__proto__')).toBe(false)
  })

  test('a stickiness or constraint on a reserved field skips its feature', () => {
    const raw = file()
    raw.featureEnvironments.find((e: { name: string }) => e.name === 'search.engine').variants[0].stickiness = 'constructor'
    expect(translate(raw).skipped).toContainEqual({ name: 'search.engine', reason: expect.stringContaining('constructor is a name') })
  })
})

describe('any file', () => {
  // a field of the export replaced by any JSON value: still an answer, never a throw, and every flag valid
  test('a damaged export translates or is refused, and whatever it carries is valid', () => {
    const paths = (o: unknown, at: (string | number)[] = []): (string | number)[][] =>
      typeof o === 'object' && o !== null
        ? [at, ...Object.entries(o).flatMap(([k, v]) => paths(v, [...at, Array.isArray(o) ? Number(k) : k]))]
        : [at]
    const all = paths(file()).filter((p) => p.length > 0)
    fc.assert(
      fc.property(fc.constantFrom(...all), fc.jsonValue(), fc.constantFrom('__proto__', 'constructor', 'a b', ''), (path, value, odd) => {
        const raw = file()
        let at = raw
        for (const k of path.slice(0, -1)) at = at[k]
        at[path[path.length - 1] as string] = typeof value === 'string' ? odd : value
        const t = translateUnleash(raw, { nowMs: NOW })
        if ('problems' in t) return
        const segments = new Map(Object.entries(t.segments).map(([n, s]) => [n, s.rule]))
        for (const flag of Object.values(t.flags)) {
          const { prerequisites: _, ...rest } = flag
          expect(validateDefinition(rest, { segments }).ok).toBe(true)
        }
      }),
      { numRuns: 150 },
    )
  }, 60_000)
})
