/**
 * Imports of other tools' files through the one import engine (docs/migrations.md#from-other-tools):
 * translated, then validated and applied as any import, `skipped` and `source.format` in the answer,
 * `mode`, `dryRun` and `?environment=` as for any import; and Flipt's export judged against Flipt:
 * every generated context gets the answer Flipt gives, splits only keeping their shares.
 */

import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { EvaluationFailed } from '../../src/services/flag-evaluator.ts'
import type { ImportOptions } from '../../src/services/migration-service.ts'
import { fliptAnswer } from '../domain/foreign/flipt-oracle.ts'
import { tempServices, userCaller } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const worlds = tempServices()
const admin = userCaller('usr_admin', ['flag:read', 'flag:write', 'migration:read', 'migration:write', 'environment:write'])
const FLIPT: ImportOptions = { mode: 'merge', values: 'overwrite', dryRun: false, format: 'flipt' }
const fliptExport = () =>
  Bun.YAML.parse(readFileSync(join(import.meta.dir, '../fixtures/foreign/flipt/export.yml'), 'utf8')) as Record<string, unknown>

test('a Flipt export imports: translated flags created, the skipped named with their reasons, the format in source', async () => {
  const { s } = await worlds.open()
  const result = await s.migrations.importDocument(admin, fliptExport(), FLIPT, 'import-upload')
  expect(result.source.format).toBe('flipt')
  // the namespace read, though none was named
  expect(result.source.environment).toBe('production')
  expect(result.summary.created).toBe(6)
  expect(result.skipped.map((x) => x.name).sort()).toEqual(['greeting', 'release-date'])
  expect(result.warnings.filter((w) => w.field === 'percentages')).toHaveLength(1)
  expect(result.backup).not.toBeNull()
  const again = await s.migrations.importDocument(admin, fliptExport(), FLIPT, 'import-upload')
  expect(again.changes).toEqual([])
})

test('a migration file answers skipped: [] too; a dry run changes nothing; the environment named is the one imported into', async () => {
  const { s } = await worlds.open()
  const plain = { environment: 'x', version: '1.0.0', createdAt: '2026-01-01T00:00:00Z', flags: { a: { type: 'BOOLEAN' } } }
  const result = await s.migrations.importDocument(admin, plain, { mode: 'merge', values: 'overwrite', dryRun: false }, 'import-upload')
  expect(result.skipped).toEqual([])
  const dry = await s.migrations.importDocument(admin, fliptExport(), { ...FLIPT, dryRun: true }, 'import-upload')
  expect(dry.summary.created).toBe(6)
  expect(dry.backup).toBeNull()
  expect(Object.keys(s.migrations.exportDocument(SYSTEM.principal).document.flags)).toEqual(['a'])
  await expect(s.migrations.importDocument(admin, fliptExport(), { ...FLIPT, environment: 'nowhere' }, 'import-upload')).rejects.toThrow(
    'no environment named',
  )
})

test('a translated flag the validation refuses is skipped with the validation reason; the rest imports', async () => {
  const { s } = await worlds.open()
  const doc = {
    flags: [
      { key: 'fine', type: 'BOOLEAN_FLAG_TYPE', enabled: true },
      { key: 'huge', type: 'VARIANT_FLAG_TYPE', enabled: true, description: 'x'.repeat(5000), variants: [{ key: 'a' }] },
    ],
  }
  const result = await s.migrations.importDocument(admin, doc, FLIPT, 'import-upload')
  expect(result.changes.map((c) => c.name)).toEqual(['fine'])
  expect(result.skipped).toEqual([{ name: 'huge', reason: expect.stringContaining("refused by flagd's validation: description") }])
})

test('a file of another tool posted as Flipt is refused whole, saying what it expected, and changes nothing', async () => {
  const { s } = await worlds.open()
  const unleash = { version: 1, features: [{ name: 'a' }], featureStrategies: [] }
  await expect(s.migrations.importDocument(admin, unleash, FLIPT, 'import-upload')).rejects.toMatchObject({
    details: { errors: [{ field: 'body', reason: expect.stringContaining('not a Flipt export') }] },
  })
})

/** A small deterministic generator of contexts over the attributes the export's segments read. */
function contexts(count: number): Record<string, unknown>[] {
  let seed = 42
  const pick = <T>(list: readonly T[]): T => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31
    return list[seed % list.length] as T
  }
  const out: Record<string, unknown>[] = []
  for (let i = 0; i < count; i++) {
    const c: Record<string, unknown> = {}
    const set = (k: string, v: unknown) => v !== undefined && (c[k] = v)
    set('targetingKey', pick(['user-1', 'user-2', `user-${i}`, undefined]))
    set('role', pick(['employee', 'guest', '', undefined]))
    set('beta', pick([true, false, undefined]))
    set('plan', pick(['free', 'pro', 'trial', '', undefined]))
    set('region', pick(['de', 'fr', 'us', undefined]))
    set('country', pick(['ch', 'de', '', undefined]))
    set('spent', pick([500, 999.5, 1000, 2000, undefined]))
    set('refunds', pick([0, 2, 3, 7, undefined]))
    set('build', pick([40, 41, 41.5, 42, undefined]))
    out.push(c)
  }
  return out
}

test('every generated context gets from flagd the answer Flipt gives (a split: one of its variants)', async () => {
  const { s } = await worlds.open()
  const doc = fliptExport()
  const result = await s.migrations.importDocument(admin, doc, FLIPT, 'import-upload')
  const skipped = new Set(result.skipped.map((x) => x.name))
  const flags = (doc.flags as Record<string, unknown>[]).filter((f) => !skipped.has(f.key as string))
  let compared = 0
  for (const context of contexts(600))
    for (const flag of flags) {
      const expected = fliptAnswer(doc, flag, context)
      let got: { value?: unknown }
      try {
        got = s.evaluations.one(SYSTEM.principal, flag.key as string, context).result
      } catch (err) {
        if (err instanceof EvaluationFailed) throw new Error(`${flag.key} failed for ${JSON.stringify(context)}: ${err.message}`)
        throw err
      }
      const where = { flag: flag.key, context }
      if ('none' in expected) expect({ ...where, value: got.value }).toEqual({ ...where, value: undefined })
      else if ('value' in expected) expect({ ...where, value: got.value }).toEqual({ ...where, value: expected.value })
      else expect(expected.oneOf).toContainEqual(got.value)
      compared++
    }
  expect(compared).toBe(600 * 6)
})

test('replace deletes flags the file does not hold, but leaves a flag the file holds and that was skipped', async () => {
  const { s } = await worlds.open()
  await s.flags.create(admin, { name: 'greeting', type: 'STRING', value: 'hello' })
  await s.flags.create(admin, { name: 'unrelated', type: 'BOOLEAN' })
  const result = await s.migrations.importDocument(admin, fliptExport(), { ...FLIPT, mode: 'replace' }, 'import-upload')
  expect(result.changes.filter((c) => c.action === 'delete').map((c) => c.name)).toEqual(['unrelated'])
  expect(Object.keys(s.migrations.exportDocument(SYSTEM.principal).document.flags)).toContain('greeting')
})

test("another tool's file sent without a format is refused with one problem naming the format to add, and changes nothing", async () => {
  const { s } = await worlds.open()
  const unleash = JSON.parse(readFileSync(join(import.meta.dir, '../fixtures/foreign/unleash/export.json'), 'utf8'))
  const plain: ImportOptions = { mode: 'merge', values: 'overwrite', dryRun: false }
  const refused = s.migrations.importDocument(admin, unleash, plain, 'import-upload')
  await expect(refused).rejects.toMatchObject({
    details: { errors: [{ field: 'format', reason: expect.stringContaining('format=unleash') }], errorCount: 1 },
  })
  await expect(s.migrations.importDocument(admin, fliptExport(), plain, 'import-upload')).rejects.toThrow('format=flipt')
  expect(Object.keys(s.migrations.exportDocument(SYSTEM.principal).document.flags)).toEqual([])
})

test('the Unleash and LaunchDarkly environments read are the source environment, named or the first; flag data that names none says the name was not checked', async () => {
  const { s } = await worlds.open()
  const unleash = JSON.parse(readFileSync(join(import.meta.dir, '../fixtures/foreign/unleash/export.json'), 'utf8'))
  const dry = { mode: 'merge', values: 'overwrite', dryRun: true } as const
  const u = await s.migrations.importDocument(admin, unleash, { ...dry, format: 'unleash' }, 'import-upload')
  expect(u.source.environment).toBe('production')
  const rest = JSON.parse(readFileSync(join(import.meta.dir, '../fixtures/foreign/launchdarkly/rest-flags.json'), 'utf8'))
  const l = await s.migrations.importDocument(admin, rest, { ...dry, format: 'launchdarkly' }, 'import-upload')
  expect(l.source.environment).not.toBe('')
  const data = JSON.parse(readFileSync(join(import.meta.dir, '../fixtures/foreign/launchdarkly/flag-data.json'), 'utf8'))
  const d = await s.migrations.importDocument(admin, data, { ...dry, format: 'launchdarkly', sourceEnvironment: 'prod' }, 'import-upload')
  expect(d.warnings.find((w) => w.field === 'sourceEnvironment')?.reason).toContain('was not checked')
})
