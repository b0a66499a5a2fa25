/**
 * GO Feature Flag's future `scheduledRollout` steps imported as scheduled change requests
 * (docs/migrations.md#changes-a-later-time-brings): made in the environment imported into, by the
 * importer, in the import's commit; listed in the answer (a dry run makes none); applied by the
 * schedule at their time; kept, not made twice, when the file is imported again; and where the
 * environment's rules would hold them back or refuse them, the answer says so.
 */

import { expect, test } from 'bun:test'
import type { ImportOptions } from '../../src/services/migration-service.ts'
import { START, storedUser, tempServices, userCaller } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const worlds = tempServices()
const setup = userCaller('usr_setup', ['flag:read', 'flag:write', 'environment:write'])
const GOFF: ImportOptions = { mode: 'merge', values: 'overwrite', dryRun: false, format: 'gofeatureflag', environment: 'staging' }
const DAY = 86_400_000
const later = (days: number) => new Date(START + days * DAY).toISOString()

/** `price` serves 1 now, 2 from day 10 and nothing (disabled) from day 20; `plain` never changes. */
const file = () => ({
  price: {
    variations: { low: 1, high: 2 },
    defaultRule: { variation: 'low' },
    scheduledRollout: [
      { date: later(20), disable: true },
      { date: later(10), defaultRule: { variation: 'high' } },
    ],
  },
  plain: { variations: { on: true, off: false }, defaultRule: { variation: 'on' } },
})

async function world(staging: Record<string, unknown> = {}) {
  const w = await worlds.open({ env: { FLAGD_ENVIRONMENT: 'staging' } })
  await w.s.environments.put(setup, 'staging', staging)
  const importer = await storedUser(w.s, 'importer', ['flag:read', 'flag:write', 'migration:write'])
  const requests = () => w.s.changeRequests.list(SYSTEM.principal, {})
  return { ...w, importer, requests }
}

test('each future step becomes a scheduled change request in the environment imported into, applied at its time', async () => {
  const w = await world()
  const result = await w.s.migrations.importDocument(w.importer.as(), file(), GOFF, 'import-upload')
  expect(result.skipped).toEqual([])
  expect(result.changes.map((c) => c.name).sort()).toEqual(['plain', 'price'])
  expect(result.scheduled).toEqual([
    { flag: 'price', at: later(10), changeRequest: expect.any(String), state: 'scheduled' },
    { flag: 'price', at: later(20), changeRequest: expect.any(String), state: 'scheduled' },
  ])
  const [first, second] = (result.scheduled ?? []).map((s) => w.s.changeRequests.get(SYSTEM.principal, s.changeRequest as string))
  expect(first).toMatchObject({ environment: 'staging', scheduledAt: later(10), changes: [{ flag: 'price', set: { value: 2 } }] })
  expect(first?.author).toMatchObject({ type: 'user', id: w.importer.id })
  expect(second).toMatchObject({ scheduledAt: later(20), changes: [{ flag: 'price', set: { enabled: false } }] })
  const serves = () => w.s.flags.get(SYSTEM.principal, 'price', 'staging')
  expect(serves()).toMatchObject({ value: 1, enabled: true })
  w.advance(10 * DAY)
  expect((await w.s.changeRequests.applyDue()).map((o) => o.request.state)).toEqual(['applied'])
  expect(serves()).toMatchObject({ value: 2, enabled: true })
  w.advance(10 * DAY)
  expect((await w.s.changeRequests.applyDue()).map((o) => o.request.state)).toEqual(['applied'])
  expect(serves()).toMatchObject({ value: 2, enabled: false })
})

test('the requests are made in the import commit: its audit entries carry the import source', async () => {
  const w = await world()
  await w.s.migrations.importDocument(w.importer.as(), file(), GOFF, 'import-upload')
  const { entries } = await w.s.audit.list(SYSTEM.principal, { limit: 50 })
  const made = entries.filter((e) => e.action === 'change-request.created')
  expect(made).toHaveLength(2)
  expect(new Set(made.map((e) => e.source))).toEqual(new Set(['import-upload']))
})

test('a dry run lists what it would schedule and makes nothing; importing again keeps the requests made', async () => {
  const w = await world()
  const dry = await w.s.migrations.importDocument(w.importer.as(), file(), { ...GOFF, dryRun: true }, 'import-upload')
  expect(dry.scheduled).toEqual([
    { flag: 'price', at: later(10), changeRequest: null, state: 'scheduled' },
    { flag: 'price', at: later(20), changeRequest: null, state: 'scheduled' },
  ])
  expect(w.requests()).toEqual([])
  const first = await w.s.migrations.importDocument(w.importer.as(), file(), GOFF, 'import-upload')
  const again = await w.s.migrations.importDocument(w.importer.as(), file(), GOFF, 'import-upload')
  expect(again.changes).toEqual([])
  expect(again.scheduled).toEqual(first.scheduled)
  expect(w.requests()).toHaveLength(2)
})

test('where the environment needs approvals the requests wait open, and the answer says so', async () => {
  const w = await world({ requiredApprovals: 1 })
  const result = await w.s.migrations.importDocument(w.importer.as(), file(), GOFF, 'import-upload')
  expect(result.scheduled?.map((s) => s.state)).toEqual(['open', 'open'])
  expect(result.scheduled?.[0]?.note).toContain('staging needs 1 approval')
  w.advance(30 * DAY)
  expect(await w.s.changeRequests.applyDue()).toEqual([])
  expect(w.s.flags.get(SYSTEM.principal, 'price', 'staging').value).toBe(1)
})

test('a step that changes shared fields while another environment is protected skips its flag, saying why', async () => {
  const w = await world()
  await w.s.environments.put(setup, 'production', { protected: true })
  const doc = {
    ...file(),
    grows: {
      variations: { a: 'a', b: 'b' },
      defaultRule: { variation: 'a' },
      scheduledRollout: [{ date: later(5), variations: { c: 'c' } }],
    },
  }
  const result = await w.s.migrations.importDocument(w.importer.as(), doc, GOFF, 'import-upload')
  expect(result.skipped).toEqual([{ name: 'grows', reason: expect.stringContaining('while production is protected') }])
  expect(result.changes.map((c) => c.name).sort()).toEqual(['plain', 'price'])
  expect(result.scheduled).toHaveLength(2)
})

test('an importer who may not write flags in the environment gets the flag skipped, not a request that could never apply', async () => {
  const w = await world()
  const migrator = await storedUser(w.s, 'migrator', ['migration:write'])
  const result = await w.s.migrations.importDocument(migrator.as(), file(), GOFF, 'import-upload')
  expect(result.skipped).toEqual([{ name: 'price', reason: expect.stringContaining('needs flag:write') }])
  expect(result.scheduled).toBeUndefined()
  expect(w.requests()).toEqual([])
})

test('into a protected environment without bypass the flag starts off there, and each entry says the change will not make it serve', async () => {
  const w = await world({ protected: true })
  const dry = await w.s.migrations.importDocument(w.importer.as(), { price: file().price }, { ...GOFF, dryRun: true }, 'import-upload')
  const result = await w.s.migrations.importDocument(w.importer.as(), { price: file().price }, GOFF, 'import-upload')
  expect(dry.scheduled?.map((s) => s.note)).toEqual(result.scheduled?.map((s) => s.note))
  // the later disable turns nothing on: the flag is off there either way
  expect(result.scheduled?.[0]?.note).toContain('the flag is off in staging, which is protected')
  w.advance(10 * DAY)
  await w.s.changeRequests.applyDue()
  expect(w.s.flags.get(SYSTEM.principal, 'price', 'staging')).toMatchObject({ value: 2, enabled: false })
})

test('an import the commit refuses makes no change request either: they share its commit', async () => {
  const w = await world({ protected: true })
  await w.s.flags.create(setup, { name: 'price', type: 'INTEGER', variants: { low: 1, high: 2 } })
  const refused = await w.s.migrations.importDocument(w.importer.as(), file(), GOFF, 'import-upload').catch((err) => err)
  expect(refused).toMatchObject({ code: 'CHANGE_REQUEST_REQUIRED' })
  expect(w.requests()).toEqual([])
})
