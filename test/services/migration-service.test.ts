/**
 * Migrations as use cases (docs/migrations.md, docs/environments.md#export-and-import): exports in
 * the migration format and flagd's that import back to the same flags; imports in `merge` or
 * `replace` mode, keeping or overwriting values, as a dry run, into an environment; a document with
 * mistakes is refused whole, naming every one, and changes nothing; an import that changes
 * something saves a backup first, and the same file twice changes nothing the second time.
 */

import { expect, test } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Caller } from '../../src/domain/principal.ts'
import type { ImportOptions } from '../../src/services/migration-service.ts'
import type { Services } from '../../src/services/services.ts'
import { failureOf, tempServices, userCaller } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const worlds = tempServices()
const admin = userCaller('usr_admin', ['flag:read', 'flag:write', 'migration:read', 'migration:write', 'environment:write'])
const MERGE: ImportOptions = { mode: 'merge', values: 'overwrite', dryRun: false }

/** Flags of several types with variants, a rule on a segment and metadata; a second segment used by none. */
async function world() {
  const w = await worlds.open({ env: { FLAGD_ENVIRONMENT: 'development' } })
  const { s } = w
  await s.segments.put(admin, 'beta', { description: 'opted in', rule: { in: [{ var: 'plan' }, ['beta']] } })
  await s.segments.put(admin, 'spare', { rule: { '==': [{ var: 'tier' }, 'gold'] } })
  await s.flags.create(admin, { name: 'app/retries', type: 'INTEGER', defaultValue: 3, value: 5, minValue: 1, maxValue: 10 })
  await s.flags.create(admin, {
    name: 'app/theme',
    type: 'STRING',
    value: 'light',
    description: 'colours',
    variants: { light: 'light', dark: 'dark' },
    targeting: { if: [{ $ref: 'beta' }, 'dark', 'light'] },
    metadata: { owner: 'web' },
  })
  await s.flags.create(admin, { name: 'app/checkout', type: 'BOOLEAN', value: true, enabled: false })
  await s.flags.create(admin, { name: 'app/limits', type: 'OBJECT', value: { max: 3 } })
  return w
}

/** What the default environment serves, as an export shows it (flags and segments, no timestamps). */
const served = (s: Services, env?: string) => {
  const { flags, segments } = s.migrations.exportDocument(SYSTEM.principal, env).document
  return { flags, segments }
}
const exported = (s: Services) => JSON.parse(JSON.stringify(s.migrations.exportDocument(SYSTEM.principal).document))
const importAs = (s: Services, doc: unknown, options: Partial<ImportOptions> = {}, as: Caller = admin) =>
  s.migrations.importDocument(as, doc, { ...MERGE, ...options }, 'import-upload')
const backups = (dir: string) => (existsSync(join(dir, 'backups')) ? readdirSync(join(dir, 'backups')) : [])

test('an export imports into an empty service as the same flags and segments, and again as no change', async () => {
  const a = await world()
  const b = await worlds.open({ env: { FLAGD_ENVIRONMENT: 'development' } })
  const file = JSON.parse(a.s.migrations.exportFile(SYSTEM.principal).text)
  const result = await importAs(b.s, file)
  expect(result.summary).toEqual({ created: 4, updated: 0, deleted: 0, unchanged: 0 })
  expect(served(b.s)).toEqual(served(a.s))
  const again = await importAs(b.s, file)
  expect(again).toMatchObject({ summary: { created: 0, updated: 0, deleted: 0, unchanged: 4 }, changes: [], backup: null })
})

test("flagd's format round-trips: its export imports elsewhere as the same flags, rules and segments", async () => {
  const a = await world()
  await a.s.flags.create(admin, { name: 'app/no_default', type: 'STRING', defaultValue: null })
  const b = await worlds.open({ env: { FLAGD_ENVIRONMENT: 'development' } })
  const flagd = JSON.parse(a.s.migrations.exportFlagd(SYSTEM.principal).text)
  const result = await importAs(b.s, flagd)
  expect(result.source).toMatchObject({ format: 'flagd' })
  expect(result.summary.created).toBe(5)
  const back = JSON.parse(b.s.migrations.exportFlagd(SYSTEM.principal).text)
  expect(back.$evaluators).toEqual(flagd.$evaluators)
  for (const name of Object.keys(flagd.flags)) {
    const { defaultVariant: _a, ...was } = flagd.flags[name]
    const { defaultVariant: _b, ...now } = back.flags[name]
    expect(now).toEqual(was)
    expect(back.flags[name].variants[back.flags[name].defaultVariant ?? '']).toEqual(was.variants[flagd.flags[name].defaultVariant ?? ''])
  }
})

test("flagd's format round-trips the variant name of each flag's answer (defaultVariant), a BOOLEAN's included", async () => {
  const a = await world()
  const b = await worlds.open({ env: { FLAGD_ENVIRONMENT: 'development' } })
  const flagd = a.s.migrations.exportFlagd(SYSTEM.principal)
  // an exported BOOLEAN lists its built-in variants beside the one naming its answer ("value")
  expect(JSON.parse(flagd.text).flags['app/checkout']).toMatchObject({
    defaultVariant: 'value',
    variants: { true: true, false: false, value: true },
  })
  await importAs(b.s, JSON.parse(flagd.text))
  expect(JSON.parse(b.s.migrations.exportFlagd(SYSTEM.principal).text)).toEqual(JSON.parse(flagd.text))
})

test('merge leaves the flags and segments the file does not name; replace deletes them', async () => {
  const w = await world()
  const doc = exported(w.s)
  delete doc.flags['app/limits']
  delete doc.segments.spare
  doc.flags['app/retries'].value = 7
  const merged = await importAs(w.s, doc)
  expect(merged.summary).toEqual({ created: 0, updated: 1, deleted: 0, unchanged: 2 })
  expect(w.s.flags.exists('app/limits')).toBe(true)
  expect(w.s.segments.list(SYSTEM.principal).map((x) => x.segment.name)).toEqual(['beta', 'spare'])
  const replaced = await importAs(w.s, doc, { mode: 'replace' })
  expect(replaced.summary).toEqual({ created: 0, updated: 0, deleted: 1, unchanged: 3 })
  expect(replaced.changes).toEqual([{ name: 'app/limits', action: 'delete', fields: [] }])
  expect(w.s.flags.exists('app/limits')).toBe(false)
  expect(w.s.segments.list(SYSTEM.principal).map((x) => x.segment.name)).toEqual(['beta'])
})

test('values=keep keeps each existing value (or its absence) and takes the rest of the definition', async () => {
  const w = await world()
  await w.s.flags.create(admin, { name: 'app/unset', type: 'INTEGER' })
  const doc = exported(w.s)
  doc.flags['app/retries'] = { ...doc.flags['app/retries'], value: 9, description: 'new words', maxValue: 20 }
  doc.flags['app/unset'] = { ...doc.flags['app/unset'], valueExists: true, value: 4 }
  await importAs(w.s, doc, { values: 'keep' })
  expect(w.s.flags.get(SYSTEM.principal, 'app/retries')).toMatchObject({ value: 5, description: 'new words', maxValue: 20 })
  expect(w.s.flags.get(SYSTEM.principal, 'app/unset').valueExists).toBe(false)
})

test('values=keep whose kept value breaks a new constraint is refused naming the flag, and nothing changes', async () => {
  const w = await world()
  const before = served(w.s)
  const doc = exported(w.s)
  doc.flags['app/retries'] = { ...doc.flags['app/retries'], value: 2, maxValue: 4 }
  doc.flags['app/theme'].description = 'changed too'
  const err = await failureOf(importAs(w.s, doc, { values: 'keep' }))
  expect(err).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(JSON.stringify(err.details.errors)).toContain('app/retries')
  expect(served(w.s)).toEqual(before)
  expect(backups(w.dir)).toEqual([])
})

test('a document with mistakes is refused whole, every one named by field, and changes nothing', async () => {
  const w = await world()
  const before = served(w.s)
  const doc = exported(w.s)
  doc.flags['app/retries'].value = 11
  doc.flags['app/theme'].targeting = { if: [{ $ref: 'nowhere' }, 'dark', 'light'] }
  doc.flags['app/new'] = { type: 'NOPE' }
  doc.flags['app/checkout'].vaule = true
  doc.extra = 1
  const err = await failureOf(importAs(w.s, doc))
  expect(err).toMatchObject({ code: 'INVALID_REQUEST' })
  const fields = (err.details.errors as { field: string }[]).map((p) => p.field)
  expect(fields).toEqual(
    expect.arrayContaining([
      'extra',
      expect.stringContaining('app/retries'),
      expect.stringContaining('app/theme'),
      expect.stringContaining('app/new'),
      expect.stringContaining('vaule'),
    ]),
  )
  expect(err.details.errorCount).toBe(fields.length)
  expect(served(w.s)).toEqual(before)
  expect(backups(w.dir)).toEqual([])
  expect(await failureOf(importAs(w.s, 'not a document'))).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(await failureOf(importAs(w.s, { flags: [] }))).toMatchObject({ code: 'INVALID_REQUEST' })
})

test('a dry run reports what the import would do and changes nothing; the import then does exactly that', async () => {
  const w = await world()
  const before = served(w.s)
  const doc = exported(w.s)
  doc.flags['app/retries'].value = 8
  doc.flags['app/fresh'] = { type: 'BOOLEAN', value: true }
  delete doc.flags['app/limits']
  const dry = await importAs(w.s, doc, { mode: 'replace', dryRun: true, diff: true })
  expect(dry).toMatchObject({ dryRun: true, backup: null, summary: { created: 1, updated: 1, deleted: 1, unchanged: 2 } })
  expect(dry.changes.find((c) => c.name === 'app/retries')).toEqual({
    name: 'app/retries',
    action: 'update',
    fields: ['value'],
    diff: { value: { before: 5, after: 8 } },
  })
  expect(served(w.s)).toEqual(before)
  expect(backups(w.dir)).toEqual([])
  const done = await importAs(w.s, doc, { mode: 'replace', diff: true })
  expect({ ...done, dryRun: true, backup: null } as typeof dry).toEqual(dry)
  expect(w.s.flags.get(SYSTEM.principal, 'app/retries').value).toBe(8)
})

test('an import that changes something saves the flags as they were first, and names the backup', async () => {
  const w = await world()
  const before = exported(w.s)
  const doc = exported(w.s)
  doc.flags['app/retries'].value = 6
  w.advance(60_000)
  const { backup } = await importAs(w.s, doc)
  expect(backup).toEqual(expect.any(String))
  expect(backups(w.dir)).toHaveLength(1)
  const saved = JSON.parse(await Bun.file(join(w.dir, 'backups', backups(w.dir)[0] as string)).text())
  expect(saved.flags).toEqual(before.flags)
  expect(saved.segments).toEqual(before.segments)
})

test('importing needs migration:write from an unconfined caller; exporting needs migration:read', async () => {
  const w = await world()
  const before = served(w.s)
  const doc = exported(w.s)
  doc.flags['app/retries'].value = 6
  for (const as of [
    userCaller('usr_writer', ['flag:read', 'flag:write', 'migration:read']),
    userCaller('usr_confined', ['migration:read', 'migration:write'], { flagPrefixes: ['app/'] }),
  ])
    expect(await failureOf(importAs(w.s, doc, {}, as))).toMatchObject({ code: 'FORBIDDEN' })
  const reader = userCaller('usr_reader', ['flag:read'])
  const confined = userCaller('usr_confined_reader', ['migration:read'], { flagPrefixes: ['app/'] })
  for (const as of [reader, confined])
    for (const call of [
      () => w.s.migrations.exportDocument(as.principal),
      () => w.s.migrations.exportFile(as.principal),
      () => w.s.migrations.exportFlagd(as.principal),
    ])
      expect(await failureOf(call)).toMatchObject({ code: 'FORBIDDEN' })
  expect(served(w.s)).toEqual(before)
  // migration:write alone imports (flag:write is not needed)
  await importAs(w.s, doc, {}, userCaller('usr_migrator', ['migration:write']))
  expect(w.s.flags.get(SYSTEM.principal, 'app/retries').value).toBe(6)
})

test("an import into an environment sets that environment's states and every environment's shared fields", async () => {
  const w = await world()
  await w.s.environments.put(admin, 'staging', {})
  const doc = exported(w.s)
  doc.flags['app/retries'] = { ...doc.flags['app/retries'], value: 8, description: 'shared words' }
  doc.flags['app/fresh'] = { type: 'BOOLEAN', value: true }
  await importAs(w.s, doc, { environment: 'staging' })
  expect(w.s.flags.get(SYSTEM.principal, 'app/retries', 'staging')).toMatchObject({ value: 8, description: 'shared words' })
  expect(w.s.flags.get(SYSTEM.principal, 'app/retries', 'development')).toMatchObject({ value: 5, description: 'shared words' })
  expect(w.s.flags.get(SYSTEM.principal, 'app/fresh', 'staging')).toMatchObject({ value: true })
  expect(w.s.flags.get(SYSTEM.principal, 'app/fresh', 'development')).toMatchObject({ valueExists: false, enabled: true })
  // the export of an environment carries its states and names it
  expect(w.s.migrations.exportDocument(SYSTEM.principal, 'staging').document).toMatchObject({
    environment: 'staging',
    flags: { 'app/retries': { value: 8 } },
  })
  expect(JSON.parse(w.s.migrations.exportFlagd(SYSTEM.principal, 'staging').text).metadata).toMatchObject({ environment: 'staging' })
  const before = served(w.s)
  expect(await failureOf(importAs(w.s, doc, { environment: 'nowhere' }))).toMatchObject({ code: 'NOT_FOUND' })
  expect(await failureOf(() => w.s.migrations.exportDocument(SYSTEM.principal, 'nowhere'))).toMatchObject({ code: 'NOT_FOUND' })
  expect(served(w.s)).toEqual(before)
})

test('an import past limits.maxFlags is refused naming the limit, and changes nothing', async () => {
  const w = await worlds.open({ env: { FLAGD_LIMITS_MAX_FLAGS: '2' } })
  await w.s.flags.create(admin, { name: 'a', type: 'BOOLEAN' })
  const doc = exported(w.s)
  doc.flags.b = { type: 'BOOLEAN' }
  doc.flags.c = { type: 'BOOLEAN' }
  const err = await failureOf(importAs(w.s, doc))
  expect(err).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'flags' } })
  expect(err.message).toContain('limits.maxFlags')
  expect(w.s.flags.exists('b')).toBe(false)
  // replacing keeps within it
  delete doc.flags.a
  expect((await importAs(w.s, doc, { mode: 'replace' })).summary).toMatchObject({ created: 2, deleted: 1 })
})

test("values=keep into an environment keeps that environment's values; the shared fields still change everywhere", async () => {
  const w = await world()
  await w.s.environments.put(admin, 'staging', {})
  await w.s.flags.update(admin, 'app/retries', { value: 2 }, undefined, undefined, 'staging')
  const doc = JSON.parse(JSON.stringify(w.s.migrations.exportDocument(SYSTEM.principal, 'staging').document))
  doc.flags['app/retries'] = { ...doc.flags['app/retries'], value: 9, description: 'shared words' }
  await importAs(w.s, doc, { values: 'keep', environment: 'staging' })
  expect(w.s.flags.get(SYSTEM.principal, 'app/retries', 'staging')).toMatchObject({ value: 2, description: 'shared words' })
  expect(w.s.flags.get(SYSTEM.principal, 'app/retries', 'development')).toMatchObject({ value: 5, description: 'shared words' })
})

test('a diff shows values only to a caller who may read flags', async () => {
  const w = await world()
  const doc = exported(w.s)
  doc.flags['app/retries'].value = 6
  const blind = await importAs(w.s, doc, { dryRun: true, diff: true }, userCaller('usr_migrator', ['migration:write']))
  expect(blind.changes).toEqual([{ name: 'app/retries', action: 'update', fields: ['value'] }])
  const seeing = await importAs(w.s, doc, { dryRun: true, diff: true })
  expect(seeing.changes[0]?.diff).toEqual({ value: { before: 5, after: 6 } })
})

test('segments travel with the file: a rule may use one the file makes, and a changed one moves the flags using it', async () => {
  const w = await world()
  const doc = exported(w.s)
  doc.segments.staff = { description: '', rule: { ends_with: [{ var: 'email' }, '@example.com'] } }
  doc.flags['app/staff_only'] = { type: 'BOOLEAN', targeting: { if: [{ $ref: 'staff' }, 'true', 'false'] } }
  const made = await importAs(w.s, doc)
  expect(made.summary).toMatchObject({ created: 1, unchanged: 4 })
  expect(made.segmentChanges).toEqual([{ name: 'staff', action: 'create' }])
  const revision = w.s.flags.get(SYSTEM.principal, 'app/staff_only').revision
  doc.segments.staff.rule = { ends_with: [{ var: 'email' }, '@example.org'] }
  const changed = await importAs(w.s, doc)
  expect(changed.segmentChanges).toEqual([{ name: 'staff', action: 'update' }])
  expect(w.s.flags.get(SYSTEM.principal, 'app/staff_only').revision).toBe(revision + 1)
  expect(w.s.segments.get(SYSTEM.principal, 'staff').usedBy.flags).toEqual(['app/staff_only'])
})

test('an import naming the default environment creates flags with the file state there and the type defaults elsewhere', async () => {
  const w = await world()
  await w.s.environments.put(admin, 'staging', {})
  await w.s.flags.update(admin, 'app/retries', { value: 2 }, undefined, undefined, 'staging')
  const doc = exported(w.s)
  doc.flags['app/fresh'] = { type: 'BOOLEAN', value: true }
  doc.flags['app/retries'].value = 6
  await importAs(w.s, doc, { environment: 'development' })
  expect(w.s.flags.get(SYSTEM.principal, 'app/fresh', 'development')).toMatchObject({ value: true })
  expect(w.s.flags.get(SYSTEM.principal, 'app/fresh', 'staging')).toMatchObject({ valueExists: false, enabled: true })
  expect(w.s.flags.get(SYSTEM.principal, 'app/retries', 'development').value).toBe(6)
  expect(w.s.flags.get(SYSTEM.principal, 'app/retries', 'staging').value).toBe(2)
})

/** Every flag's revision, by name. */
const revisions = (s: Services) =>
  Object.fromEntries(
    (JSON.parse(s.flags.list(SYSTEM.principal, '')) as { name: string; revision: number }[]).map((f) => [f.name, f.revision]),
  )

test('a flagd export imported back into the daemon it came from changes nothing: no change, no revision, no backup', async () => {
  const w = await world()
  const { s } = w
  // what the flagd format cannot say alike: a rule on a segment that refers to another, a rollout,
  // no default, an ENUM, an A/B test, constraints, a description, a disabled flag
  await s.segments.put(admin, 'inner', { rule: { '==': [{ var: 'country' }, 'fr'] } })
  await s.segments.put(admin, 'outer', { rule: { and: [{ $ref: 'inner' }, { $ref: 'beta' }] } })
  await s.flags.create(admin, {
    name: 'app/banner',
    type: 'STRING',
    defaultValue: null,
    variants: { on: 'on', off: 'off' },
    targeting: { if: [{ $ref: 'outer' }, 'on', null] },
    rollout: { variant: 'on', start: '2026-12-01T00:00:00Z', end: '2026-12-08T00:00:00Z', fromPercent: 5, toPercent: 50 },
  })
  await s.flags.create(admin, { name: 'app/size', type: 'ENUM', enumValues: ['s', 'm', 'l'], value: 'm' })
  await s.flags.create(admin, { name: 'app/test', type: 'AB-TEST', chancePercentB: 20 })
  await s.flags.create(admin, { name: 'app/ratio', type: 'NUMBER', value: 0.5, minValue: 0, maxValue: 1, description: 'share' })
  const before = { flags: revisions(s), served: served(s), backups: backups(w.dir) }
  const flagd = JSON.parse(s.migrations.exportFlagd(SYSTEM.principal).text)
  for (const dryRun of [true, false]) {
    const result = await importAs(s, flagd, { dryRun })
    expect(result.changes).toEqual([])
    expect(result.segmentChanges).toBeUndefined()
    expect(result.summary).toMatchObject({ created: 0, updated: 0, deleted: 0 })
  }
  expect({ flags: revisions(s), served: served(s), backups: backups(w.dir) }).toEqual(before)
})

test('variants and metadata written in another key order are no change', async () => {
  const w = await world()
  const doc = exported(w.s)
  const theme = doc.flags['app/theme']
  theme.variants = { dark: 'dark', light: 'light' }
  theme.metadata = { team: 'web', owner: 'web' }
  await importAs(w.s, { ...doc, flags: { 'app/theme': { ...theme, metadata: { owner: 'web', team: 'web' } } } })
  const before = revisions(w.s)
  const result = await importAs(w.s, { ...doc, flags: { 'app/theme': theme } })
  expect(result).toMatchObject({ changes: [], summary: { updated: 0, unchanged: 1 }, backup: null })
  expect(revisions(w.s)).toEqual(before)
})

test('a flagd document replaces every flag but TAG flags, which its format cannot hold: an export put back with replace changes nothing', async () => {
  const w = await world()
  await w.s.flags.create(admin, { name: 'app/tags', type: 'TAG', enumValues: ['a', 'b'], value: ['a'] })
  const flagd = JSON.parse(w.s.migrations.exportFlagd(SYSTEM.principal).text)
  expect(flagd.metadata.omittedFlags).toContain('app/tags')
  const before = revisions(w.s)
  const result = await importAs(w.s, flagd, { mode: 'replace' })
  expect(result).toMatchObject({ changes: [], summary: { deleted: 0 }, backup: null })
  expect(revisions(w.s)).toEqual(before)
  // a flag the document leaves out that it could hold still goes
  const { 'app/limits': _gone, ...rest } = flagd.flags
  expect((await importAs(w.s, { ...flagd, flags: rest }, { mode: 'replace' })).changes).toEqual([
    { name: 'app/limits', action: 'delete', fields: [] },
  ])
})
