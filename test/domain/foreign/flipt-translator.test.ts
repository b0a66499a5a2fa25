/**
 * Flipt's export translated (docs/migrations.md#from-flipt): recognised by content, every flag of a
 * realistic export either kept with its meaning or skipped with the reason, the shares of its splits
 * kept exactly, and every translated flag passing flagd's own validation.
 */

import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { validateDefinition } from '../../../src/domain/flag-definition.ts'
import { isFliptFile, translateFlipt } from '../../../src/domain/foreign/flipt-translator.ts'
import type { ForeignTranslation } from '../../../src/domain/foreign/foreign-translation.ts'

const FIXTURES = join(import.meta.dir, '../../fixtures/foreign/flipt')
const exportYaml = () => Bun.YAML.parse(readFileSync(join(FIXTURES, 'export.yml'), 'utf8')) as Record<string, unknown>
const translated = (raw: unknown, sourceEnvironment?: string) => {
  const out = translateFlipt(raw, { nowMs: 0, ...(sourceEnvironment ? { sourceEnvironment } : {}) })
  if ('problems' in out) throw new Error(JSON.stringify(out.problems))
  return out as ForeignTranslation
}

test("Flipt's file is recognised by its content; a migration file, a flagd document and the other tools' files are not", () => {
  expect(isFliptFile(exportYaml())).toBe(true)
  expect(isFliptFile([exportYaml(), { ...exportYaml(), namespace: 'staging' }])).toBe(true)
  expect(isFliptFile({ environment: 'x', version: '1.0.0', createdAt: '2026-01-01T00:00:00Z', flags: {} })).toBe(false)
  expect(isFliptFile({ flags: { a: { state: 'ENABLED', variants: { on: true }, defaultVariant: 'on' } } })).toBe(false)
  expect(isFliptFile({ flags: { a: { key: 'a', on: true, variations: [true, false] } }, segments: {} })).toBe(false)
  expect(isFliptFile({ version: 1, features: [], featureStrategies: [] })).toBe(false)
  expect(isFliptFile({ 'my-flag': { variations: { a: true }, defaultRule: { variation: 'a' } } })).toBe(false)
  expect(isFliptFile({ items: [] })).toBe(false)
  expect(isFliptFile([])).toBe(false)
})

test('every flag of the export is translated or skipped with the reason naming the rule, constraint and operator', () => {
  const out = translated(exportYaml())
  expect(Object.keys(out.flags).sort()).toEqual(
    ['checkout-theme', 'dark-launch', 'maintenance-mode', 'new-onboarding', 'pricing-banner', 'search.ranker'].sort(),
  )
  expect(out.skipped.map((s) => s.name).sort()).toEqual(['greeting', 'release-date'])
  expect(out.skipped.find((s) => s.name === 'release-date')?.reason).toContain('DATETIME_COMPARISON_TYPE signed_up gt')
  expect(out.skipped.find((s) => s.name === 'greeting')?.reason).toContain('suffix')
  for (const [name, definition] of Object.entries(out.flags)) {
    const checked = validateDefinition(definition, { segments: new Map(Object.entries(out.segments).map(([k, s]) => [k, s.rule])) })
    expect({ name, problems: checked.ok ? [] : checked.problems }).toEqual({ name, problems: [] })
    expect(definition.metadata).toMatchObject({ importedFrom: 'flipt' })
  }
  expect(out.flags['search.ranker']?.metadata).toMatchObject({ originalKey: 'search.ranker' })
  expect(out.warnings.filter((w) => w.field === 'percentages')).toHaveLength(1)
})

test('variants keep their attachments as values, the default variant is the default, and a flag Flipt disables is off', () => {
  const out = translated(exportYaml())
  const banner = out.flags['pricing-banner'] as Record<string, unknown>
  expect(banner.type).toBe('OBJECT')
  expect(banner.defaultValue).toEqual({ headline: 'Simple pricing', discount: 0 })
  expect(banner.targeting).toEqual({
    if: [
      { $ref: 'everyone' },
      {
        fractional: [
          ['control', 700],
          ['spring-sale', 300],
        ],
      },
      null,
    ],
  })
  const theme = out.flags['checkout-theme'] as Record<string, unknown>
  expect(theme).toMatchObject({
    type: 'STRING',
    defaultValue: null,
    enabled: true,
    variants: { classic: 'classic', dark: 'dark', festive: 'festive' },
  })
  expect(out.flags['search.ranker']).toMatchObject({ enabled: false, defaultValue: 'neural' })
  // a BOOLEAN flag answers its `enabled` when no rollout holds: always on in flagd
  expect(out.flags['maintenance-mode']).toMatchObject({ type: 'BOOLEAN', enabled: true, value: false })
})

test('shares are counted as Flipt counts them: a float32 percentage times ten, cut to thousandths; a threshold takes the buckets below it', () => {
  const doc = {
    flags: [
      {
        key: 'thirds',
        type: 'VARIANT_FLAG_TYPE',
        enabled: true,
        variants: [{ key: 'a' }, { key: 'b' }, { key: 'c' }],
        rules: [
          {
            segment: 'all',
            distributions: [
              { variant: 'a', rollout: 33.4 },
              { variant: 'b', rollout: 33.3 },
              { variant: 'c', rollout: 33.3 },
            ],
          },
        ],
      },
      {
        key: 'gap',
        type: 'VARIANT_FLAG_TYPE',
        enabled: true,
        variants: [{ key: 'a' }],
        rules: [{ segment: 'all', distributions: [{ variant: 'a', rollout: 60 }] }],
      },
      { key: 'half', type: 'BOOLEAN_FLAG_TYPE', enabled: false, rollouts: [{ threshold: { percentage: 49.5, value: true } }] },
    ],
    segments: [{ key: 'all', match_type: 'ALL_MATCH_TYPE' }],
  }
  const out = translated(doc)
  const fractional = (name: string) => JSON.stringify(out.flags[name]?.targeting)
  expect(fractional('thirds')).toContain('[["a",334],["b",333],["c",333]]')
  expect(fractional('half')).toContain('[["true",50],["false",50]]')
  expect(out.skipped).toEqual([{ name: 'gap', reason: expect.stringContaining('add up to 60 %') }])
})

test('a stream of namespaces: the one sourceEnvironment names, else the first, said in warnings; an unknown one is a problem', () => {
  const first = exportYaml()
  const second = { namespace: { key: 'staging' }, flags: [{ key: 'only-staging', type: 'BOOLEAN_FLAG_TYPE', enabled: true }] }
  expect(Object.keys(translated([first, second], 'staging').flags)).toEqual(['only-staging'])
  const plain = translated([first, second])
  expect(plain.flags['checkout-theme']).toBeDefined()
  expect(plain.warnings).toContainEqual({ field: 'sourceEnvironment', reason: expect.stringContaining('imported production') })
  expect(translateFlipt([first, second], { nowMs: 0, sourceEnvironment: 'qa' })).toEqual({
    problems: [{ field: 'sourceEnvironment', reason: expect.stringContaining('no namespace qa') }],
  })
})
