/**
 * Archive and restore (docs/api.md#archive): an archived flag leaves lists, every evaluation path,
 * sync and the flagd export, keeps its name, usage and history, and comes back exactly as it was.
 */

import { expect, test } from 'bun:test'
import type { Principal } from '../../src/domain/principal.ts'
import type { FlagChange } from '../../src/services/flag-change-feed.ts'
import type { Services } from '../../src/services/services.ts'
import { failureOf, tempServices, userCaller } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const worlds = tempServices()
const writer = userCaller('usr_writer', ['flag:read', 'flag:write'])
const evaluator: Principal = { kind: 'token', tokenId: 'tok_app', name: 'app', permissions: ['flag:evaluate'], flagPrefixes: [] }

/** `app/old` (BOOLEAN, value true, with a rule) and `app/live`, both at revision 1. */
async function world() {
  const w = await worlds.open()
  await w.s.flags.create(writer, {
    name: 'app/old',
    type: 'BOOLEAN',
    value: true,
    targeting: { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'false', null] },
  })
  await w.s.flags.create(writer, { name: 'app/live', type: 'BOOLEAN', value: false })
  return w
}

const names = (s: Services, query: Record<string, unknown> = {}) =>
  (JSON.parse(s.flags.list(SYSTEM.principal, '', undefined, query)) as { name: string }[]).map((f) => f.name)

test('an archived flag reads with archived: true, at a new revision, and leaves the list but for ?archived=true', async () => {
  const w = await world()
  const archived = await w.s.flags.archive(writer, 'app/old')
  expect(archived).toMatchObject({ name: 'app/old', archived: true, revision: 2, value: true })
  expect(JSON.parse(w.s.flags.read.json(w.s.flags.get(SYSTEM.principal, 'app/old')))).toMatchObject({ archived: true, revision: 2 })
  expect(JSON.parse(w.s.flags.read.json(w.s.flags.get(SYSTEM.principal, 'app/live'))).archived).toBe(false)
  expect(names(w.s)).toEqual(['app/live'])
  expect(names(w.s, { archived: true })).toEqual(['app/old'])
})

test('every evaluation path answers an archived flag as unknown, and sync and the flagd export leave it out', async () => {
  const w = await world()
  await w.s.flags.archive(writer, 'app/old')
  expect(() => w.s.evaluations.one(evaluator, 'app/old', {})).toThrow('no flag named')
  expect(() => w.s.evaluations.explain(SYSTEM.principal, 'app/old', {})).toThrow('no flag named')
  const bulk = w.s.evaluations.bulk(evaluator, {}, () => false)
  expect(JSON.stringify(bulk)).not.toContain('app/old')
  expect(JSON.stringify(bulk)).toContain('app/live')
  expect(w.s.evaluations.all(evaluator, {}).map(([flag]) => flag.name)).toEqual(['app/live'])
  const document = JSON.parse(w.s.sync.documentFor({ kind: 'anonymous' }))
  expect(Object.keys(document.flags)).toEqual(['app/live'])
  expect(Object.keys(JSON.parse(w.s.migrations.exportFlagd(SYSTEM.principal).text).flags)).toEqual(['app/live'])
})

test('the migration export keeps an archived flag, marked archived: true', async () => {
  const w = await world()
  await w.s.flags.archive(writer, 'app/old')
  const { flags } = JSON.parse(w.s.migrations.exportFile(SYSTEM.principal).text)
  expect(flags['app/old']).toMatchObject({ archived: true, value: true })
  expect(flags['app/live'].archived).toBeUndefined()
})

test('restore brings the flag back exactly as it was, at a new revision, and it evaluates again', async () => {
  const w = await world()
  const before = JSON.parse(w.s.flags.read.json(w.s.flags.get(SYSTEM.principal, 'app/old')))
  await w.s.flags.archive(writer, 'app/old')
  const restored = await w.s.flags.restore(writer, 'app/old')
  expect(restored.revision).toBe(3)
  const after = JSON.parse(w.s.flags.read.json(restored))
  expect({ ...after, revision: 1, updatedAt: before.updatedAt }).toEqual(before)
  expect(w.s.evaluations.one(evaluator, 'app/old', { plan: 'pro' }).result.value).toBe(false)
  expect(names(w.s)).toEqual(['app/live', 'app/old'])
})

test('the name stays taken, a change waits for a restore, and archive or restore twice is 409', async () => {
  const w = await world()
  await w.s.flags.archive(writer, 'app/old')
  const taken = await failureOf(w.s.flags.create(writer, { name: 'app/old', type: 'BOOLEAN' }))
  expect(taken).toMatchObject({ code: 'CONFLICT' })
  expect(taken.message).toContain('archived')
  const put = await failureOf(w.s.flags.update(writer, 'app/old', { value: false }))
  expect(put).toMatchObject({ code: 'CONFLICT' })
  expect(put.message).toContain('restore')
  expect(await failureOf(w.s.flags.archive(writer, 'app/old'))).toMatchObject({ code: 'CONFLICT' })
  expect(await failureOf(w.s.flags.restore(writer, 'app/live'))).toMatchObject({ code: 'CONFLICT' })
  expect(await failureOf(w.s.flags.archive(writer, 'app/none'))).toMatchObject({ code: 'NOT_FOUND' })
  expect(w.s.flags.get(SYSTEM.principal, 'app/old').revision).toBe(2)
  await w.s.flags.remove(writer, 'app/old')
  expect(w.s.flags.exists('app/old')).toBe(false)
})

test('archive and restore need the unscoped flag:write', async () => {
  const w = await world()
  const confined = userCaller('usr_confined', ['flag:read', 'flag:write@development'])
  expect(await failureOf(w.s.flags.archive(confined, 'app/old'))).toMatchObject({ code: 'FORBIDDEN' })
  const reader = userCaller('usr_reader', ['flag:read'])
  expect(await failureOf(w.s.flags.archive(reader, 'app/old'))).toMatchObject({ code: 'FORBIDDEN' })
  expect(w.s.flags.get(SYSTEM.principal, 'app/old').archived).toBeUndefined()
})

test('archive and restore are audited, and the streams tell of a delete and a create', async () => {
  const w = await world()
  const seen: FlagChange[] = []
  const stop = w.s.changeFeed.subscribe((batch) => seen.push(...batch.changes))
  await w.s.flags.archive(writer, 'app/old')
  await w.s.flags.restore(writer, 'app/old')
  stop()
  expect(seen.map((c) => [c.type, c.name, c.revision])).toEqual([
    ['flag.deleted', 'app/old', 2],
    ['flag.created', 'app/old', 3],
  ])
  const { entries } = await w.s.audit.list(SYSTEM.principal, { flag: 'app/old' })
  expect(entries.map((e) => e.action).slice(0, 2)).toEqual(['flag.restored', 'flag.archived'])
  const caughtUp = await w.s.changeFeed.page(0, w.s.changeFeed.delivered)
  expect(caughtUp.filter((c) => c.name === 'app/old').map((c) => c.type)).toEqual(['flag.created', 'flag.deleted', 'flag.created'])
})

test('an export imported elsewhere keeps archived flags archived; a flagd document leaves them as they are', async () => {
  const w = await world()
  await w.s.flags.archive(writer, 'app/old')
  const file = JSON.parse(w.s.migrations.exportFile(SYSTEM.principal).text)
  const other = await worlds.open()
  const options = { mode: 'merge' as const, values: 'overwrite' as const, dryRun: false }
  await other.s.migrations.importDocument(SYSTEM, file, options, 'import-upload')
  expect(other.s.flags.get(SYSTEM.principal, 'app/old')).toMatchObject({ archived: true, value: true })
  expect(other.s.flags.get(SYSTEM.principal, 'app/live').archived).toBeUndefined()
  // the flagd format cannot say "archived": a flag of the same name keeps its state
  const flagd = { flags: { 'app/old': { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'off' } } }
  await other.s.migrations.importDocument(SYSTEM, flagd, options, 'import-upload')
  expect(other.s.flags.get(SYSTEM.principal, 'app/old')).toMatchObject({ archived: true })
  // a migration file without the mark brings it back
  const { archived: _a, ...live } = file.flags['app/old']
  await other.s.migrations.importDocument(SYSTEM, { ...file, flags: { 'app/old': live } }, options, 'import-upload')
  expect(other.s.flags.get(SYSTEM.principal, 'app/old').archived).toBeUndefined()
  expect(
    await failureOf(
      other.s.migrations.importDocument(SYSTEM, { ...file, flags: { x: { ...live, archived: 'yes' } } }, options, 'import-upload'),
    ),
  ).toMatchObject({ code: 'INVALID_REQUEST' })
})

test('a change request cannot change an archived flag behind the archive', async () => {
  const w = await world()
  await w.s.flags.archive(writer, 'app/old')
  const made = await failureOf(
    w.s.changeRequests.create(writer, { environment: 'development', title: 't', changes: [{ flag: 'app/old', set: { value: false } }] }),
  )
  expect(made).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(JSON.stringify(made.details)).toContain('archived')
})

test('a webhook may ask for flag.archived and flag.restored by name', async () => {
  const hooks = [{ url: 'http://127.0.0.1:9/hook', events: ['flag.archived', 'flag.restored'], secret: 'x'.repeat(32) }]
  const w = await worlds.open({ env: { FLAGD_WEBHOOKS: JSON.stringify(hooks) } })
  expect(w.s.flags.exists('app/old')).toBe(false)
})

test('promoting every flag leaves archived ones as they are; naming one is refused', async () => {
  const w = await world()
  await w.s.environments.put(SYSTEM, 'staging', {})
  await w.s.flags.update(writer, 'app/old', { value: false }, undefined, undefined, 'staging')
  await w.s.flags.update(writer, 'app/live', { value: true }, undefined, undefined, 'staging')
  await w.s.flags.archive(writer, 'app/old')
  const compared = w.s.environments.compare(writer, 'staging', 'development')
  expect(compared.map((d) => d.name)).toEqual(['app/live'])
  const promoted = await w.s.environments.promote(writer, 'development', { from: 'staging' })
  expect(promoted.changes.map((c) => c.name)).toEqual(['app/live'])
  expect(w.s.flags.get(SYSTEM.principal, 'app/old')).toMatchObject({ value: true, revision: 3 })
  const named = await failureOf(w.s.environments.promote(writer, 'development', { from: 'staging', flags: ['app/old'] }))
  expect(named).toMatchObject({ code: 'CONFLICT' })
})

test('a replacing import of the flagd export leaves archived flags, which that format cannot hold', async () => {
  const w = await world()
  await w.s.flags.archive(writer, 'app/old')
  const flagd = JSON.parse(w.s.migrations.exportFlagd(SYSTEM.principal).text)
  const result = await w.s.migrations.importDocument(
    SYSTEM,
    flagd,
    { mode: 'replace', values: 'overwrite', dryRun: false },
    'import-upload',
  )
  expect(result.summary).toMatchObject({ deleted: 0 })
  expect(w.s.flags.get(SYSTEM.principal, 'app/old').archived).toBe(true)
})

test('a change to an archived flag (a segment it uses) reaches no stream, live or caught up', async () => {
  const w = await world()
  await w.s.segments.put(SYSTEM, 'pro', { rule: { '==': [{ var: 'plan' }, 'pro'] } })
  await w.s.flags.update(writer, 'app/old', { targeting: { if: [{ $ref: 'pro' }, 'false', null] } })
  await w.s.flags.archive(writer, 'app/old')
  const seen: FlagChange[] = []
  const stop = w.s.changeFeed.subscribe((batch) => seen.push(...batch.changes))
  const from = w.s.changeFeed.delivered
  await w.s.segments.put(SYSTEM, 'pro', { rule: { '==': [{ var: 'plan' }, 'gold'] } })
  stop()
  expect(seen).toEqual([])
  expect(w.s.flags.get(SYSTEM.principal, 'app/old').revision).toBe(4)
  expect(await w.s.changeFeed.page(from, w.s.changeFeed.delivered)).toEqual([])
})

test('archiving in a protected environment without a bypass says how to: a change request, or a bypass', async () => {
  const w = await world()
  await w.s.environments.put(SYSTEM, 'production', { protected: true, requiredApprovals: 1 })
  const refused = await failureOf(w.s.flags.archive(writer, 'app/old'))
  expect(refused.code).toBe('CHANGE_REQUEST_REQUIRED')
  expect(refused.details).toEqual({ environment: 'production' })
  expect(refused.message).toContain('archiving flag app/old stops what production serves')
  expect(refused.message).toContain('flag:bypass@production')
  expect(refused.message).toContain('POST /api/flags/app/old/archive')
  expect(refused.message).not.toContain('change-request create')
  expect(refused.message).toContain('"archive": true')
  expect(JSON.parse(w.s.flags.read.json(w.s.flags.get(SYSTEM.principal, 'app/old'))).archived).toBe(false)
})
