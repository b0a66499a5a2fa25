/**
 * A flag's kind, owner and tags (docs/api.md#lifecycle): shared fields validated by name, the
 * list's filters, and `potentiallyStale` once a flag outlives its kind's lifetime on the test clock.
 */

import { expect, test } from 'bun:test'
import { loadConfig } from '../../src/config.ts'
import { kindLifetimes, type Services } from '../../src/services/services.ts'
import { failureOf, tempServices, userCaller } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const worlds = tempServices()
const writer = userCaller('usr_writer', ['flag:read', 'flag:write'])
const DAY = 86_400_000

const read = (s: Services, name: string) => JSON.parse(s.flags.read.json(s.flags.get(SYSTEM.principal, name)))
const names = (s: Services, filter = {}) =>
  (JSON.parse(s.flags.list(SYSTEM.principal, '', undefined, filter)) as { name: string }[]).map((f) => f.name)

test('kind, owner and tags are stored and read back; kind reads release and tags [] when unset', async () => {
  const w = await worlds.open()
  await w.s.flags.create(writer, { name: 'a', type: 'BOOLEAN', kind: 'experiment', owner: 'team-checkout', tags: ['web', 'q4:2026'] })
  await w.s.flags.create(writer, { name: 'b', type: 'BOOLEAN' })
  expect(read(w.s, 'a')).toMatchObject({ kind: 'experiment', owner: 'team-checkout', tags: ['web', 'q4:2026'], potentiallyStale: false })
  const plain = read(w.s, 'b')
  expect(plain).toMatchObject({ kind: 'release', tags: [], potentiallyStale: false })
  expect(plain.owner).toBeUndefined()
})

test('a bad kind, owner or tag is 400 naming the field, and nothing is made', async () => {
  const w = await worlds.open()
  const tags = Array.from({ length: 21 }, (_, i) => `t${i}`)
  const cases: [Record<string, unknown>, string][] = [
    [{ kind: 'temporary' }, 'kind'],
    [{ owner: '' }, 'owner'],
    [{ owner: 'x'.repeat(101) }, 'owner'],
    [{ owner: 7 }, 'owner'],
    [{ tags: 'web' }, 'tags'],
    [{ tags }, 'tags'],
    [{ tags: ['ok', 'not ok'] }, 'tags'],
    [{ tags: ['x'.repeat(65)] }, 'tags'],
    [{ tags: ['a', 'a'] }, 'tags'],
  ]
  for (const [fields, field] of cases) {
    const err = await failureOf(w.s.flags.create(writer, { name: 'x', type: 'BOOLEAN', ...fields }))
    expect(err).toMatchObject({ code: 'INVALID_REQUEST' })
    expect((err.details.errors as { field: string }[]).map((p) => p.field)).toContain(field)
  }
  expect(w.s.flags.exists('x')).toBe(false)
})

test('they are shared fields: a writer of one environment may not change them, null removes them, a type change keeps them', async () => {
  const w = await worlds.open()
  await w.s.flags.create(writer, { name: 'a', type: 'BOOLEAN', owner: 'me', tags: ['web'] })
  const confined = userCaller('usr_dev', ['flag:read', 'flag:write@development'])
  expect(await failureOf(w.s.flags.update(confined, 'a', { owner: 'you' }))).toMatchObject({ code: 'FORBIDDEN' })
  await w.s.flags.update(confined, 'a', { value: true })
  await w.s.flags.update(writer, 'a', { type: 'STRING', kind: 'operational' })
  expect(read(w.s, 'a')).toMatchObject({ type: 'STRING', kind: 'operational', owner: 'me', tags: ['web'] })
  await w.s.flags.update(writer, 'a', { owner: null, tags: null, kind: null, potentiallyStale: true, archived: true })
  const after = read(w.s, 'a')
  expect(after).toMatchObject({ kind: 'release', tags: [], archived: false })
  expect(after.owner).toBeUndefined()
})

test('potentiallyStale once a flag outlives its kind: 40 days for a release, 7 for operational, never for a kill switch', async () => {
  const w = await worlds.open()
  await w.s.flags.create(writer, { name: 'rel', type: 'BOOLEAN' })
  await w.s.flags.create(writer, { name: 'ops', type: 'BOOLEAN', kind: 'operational' })
  await w.s.flags.create(writer, { name: 'kill', type: 'BOOLEAN', kind: 'kill-switch' })
  const etag = w.s.flags.listTag(SYSTEM.principal)
  const list = () =>
    Object.fromEntries((JSON.parse(w.s.flags.list(SYSTEM.principal, '')) as any[]).map((f) => [f.name, f.potentiallyStale]))
  expect(list()).toEqual({ kill: false, ops: false, rel: false })
  w.advance(8 * DAY)
  expect(list()).toEqual({ kill: false, ops: true, rel: false })
  expect(read(w.s, 'ops').potentiallyStale).toBe(true)
  expect(w.s.flags.listTag(SYSTEM.principal)).not.toBe(etag)
  w.advance(33 * DAY)
  expect(list()).toEqual({ kill: false, ops: true, rel: true })
  const usage = await w.s.usage.list(SYSTEM.principal)
  expect(Object.fromEntries(usage.map((u) => [u.name, u.potentiallyStale]))).toEqual({ kill: false, ops: true, rel: true })
})

test('lifecycle.<kind>Days changes the lifetimes: 0 days, or null for none', async () => {
  const w = await worlds.open({ env: { FLAGD_LIFECYCLE_RELEASE_DAYS: '0', FLAGD_LIFECYCLE_OPERATIONAL_DAYS: 'null' } })
  await w.s.flags.create(writer, { name: 'rel', type: 'BOOLEAN' })
  await w.s.flags.create(writer, { name: 'ops', type: 'BOOLEAN', kind: 'operational' })
  w.advance(1000 * DAY)
  expect(read(w.s, 'rel').potentiallyStale).toBe(true)
  expect(read(w.s, 'ops').potentiallyStale).toBe(false)
  expect(await failureOf(worlds.open({ env: { FLAGD_LIFECYCLE_RELEASE_DAYS: '3651' } }))).toBeDefined()
})

test('the list filters by kind, owner and tags (several tags: all of them)', async () => {
  const w = await worlds.open()
  await w.s.flags.create(writer, { name: 'a', type: 'BOOLEAN', kind: 'experiment', owner: 'web', tags: ['x', 'y'] })
  await w.s.flags.create(writer, { name: 'b', type: 'BOOLEAN', owner: 'web', tags: ['x'] })
  await w.s.flags.create(writer, { name: 'c', type: 'BOOLEAN', tags: ['y'] })
  expect(names(w.s, { kind: 'experiment' })).toEqual(['a'])
  expect(names(w.s, { kind: 'release' })).toEqual(['b', 'c'])
  expect(names(w.s, { owner: 'web' })).toEqual(['a', 'b'])
  expect(names(w.s, { tags: ['x'] })).toEqual(['a', 'b'])
  expect(names(w.s, { tags: ['x', 'y'] })).toEqual(['a'])
  expect(names(w.s, { owner: 'web', tags: ['y'] })).toEqual(['a'])
  await w.s.flags.archive(writer, 'a')
  expect(names(w.s, { tags: ['x'] })).toEqual(['b'])
  expect(names(w.s, { tags: ['x'], archived: true })).toEqual(['a'])
  expect(await failureOf(() => names(w.s, { kind: 'nope' }))).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(await failureOf(() => names(w.s, { owner: 'x'.repeat(101) }))).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(await failureOf(() => names(w.s, { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }))).toMatchObject({
    code: 'INVALID_REQUEST',
  })
  expect(await failureOf(() => names(w.s, { tags: ['not a tag'] }))).toMatchObject({ code: 'INVALID_REQUEST' })
})

test('a migration export carries kind, owner and tags, and an import brings them back', async () => {
  const w = await worlds.open()
  await w.s.flags.create(writer, { name: 'a', type: 'BOOLEAN', kind: 'permission', owner: 'ops', tags: ['x'] })
  const file = JSON.parse(w.s.migrations.exportFile(SYSTEM.principal).text)
  expect(file.flags.a).toMatchObject({ kind: 'permission', owner: 'ops', tags: ['x'] })
  const other = await worlds.open()
  await other.s.migrations.importDocument(SYSTEM, file, { mode: 'merge', values: 'overwrite', dryRun: false }, 'import-upload')
  expect(read(other.s, 'a')).toMatchObject({ kind: 'permission', owner: 'ops', tags: ['x'] })
})

test('the flagd export carries kind, owner and tags in metadata, and a flagd import brings them back as fields', async () => {
  const w = await worlds.open()
  await w.s.flags.create(writer, {
    name: 'a',
    type: 'BOOLEAN',
    value: true,
    kind: 'kill-switch',
    owner: 'ops',
    tags: ['x', 'y:z'],
    metadata: { team: 't' },
  })
  await w.s.flags.create(writer, { name: 'b', type: 'BOOLEAN', value: true })
  const flagd = JSON.parse(w.s.migrations.exportFlagd(SYSTEM.principal).text)
  expect(flagd.flags.a.metadata).toMatchObject({ kind: 'kill-switch', owner: 'ops', tags: 'x,y:z', team: 't' })
  expect(Object.keys(flagd.flags.b.metadata).sort()).toEqual(['revision', 'type'])
  // back into the daemon it came from: nothing changes (docs/migrations.md#flagd-round-trip)
  const back = await w.s.migrations.importDocument(SYSTEM, flagd, { mode: 'merge', values: 'overwrite', dryRun: true }, 'import-upload')
  expect(back.summary).toMatchObject({ updated: 0, unchanged: 2 })
  const other = await worlds.open()
  await other.s.migrations.importDocument(SYSTEM, flagd, { mode: 'merge', values: 'overwrite', dryRun: false }, 'import-upload')
  const a = read(other.s, 'a')
  expect(a).toMatchObject({ kind: 'kill-switch', owner: 'ops', tags: ['x', 'y:z'], metadata: { team: 't' } })
  expect(a.metadata.kind).toBeUndefined()
  expect(read(other.s, 'b')).toMatchObject({ kind: 'release', tags: [] })
})

test('lifecycle.kill-switchDays, the kind spelt as it is, sets the kill switches lifetime from a config file', async () => {
  const w = await worlds.open()
  await Bun.write(`${w.dir}/flagd.config.json`, JSON.stringify({ lifecycle: { 'kill-switchDays': 2, releaseDays: null } }))
  const config = await loadConfig({ cwd: w.dir, env: {}, flags: { dataDir: w.dir }, warn: () => {} })
  expect(kindLifetimes(config)).toMatchObject({ 'kill-switch': 2, release: null, operational: 7 })
})
