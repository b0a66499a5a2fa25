/**
 * Writes that copy one view into another answer only what the caller may read: a rollback needs
 * `flag:read` where the audit entry's view came from and in the environment it writes
 * (docs/environments.md#audit), and a promotion of a prefix or of all flags takes only the flags
 * a confined caller may see (docs/environments.md#compare-and-promote).
 */

import { expect, test } from 'bun:test'
import type { Services } from '../../src/services/services.ts'
import { failureOf, tempServices, userCaller } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const worlds = tempServices()
const admin = userCaller('usr_admin', ['flag:read', 'flag:write', 'environment:write'])

/** production (the default) and staging; `secret/x` (INTEGER) 1 everywhere, then 5 in production at revision 2. */
async function world() {
  const w = await worlds.open({ env: { FLAGD_ENVIRONMENT: 'production' } })
  await w.s.environments.put(admin, 'staging', {})
  await w.s.environments.put(admin, 'development', {})
  await w.s.flags.create(admin, { name: 'secret/x', type: 'INTEGER', value: 1 })
  await w.s.flags.update(admin, 'secret/x', { value: 5 }, undefined, undefined, 'production')
  await w.s.flags.update(admin, 'secret/x', { value: 6 }, undefined, undefined, 'production')
  return w
}

const inEnv = (s: Services, env: string, name = 'secret/x') => s.flags.get(SYSTEM.principal, name, env)
const stagingOnly = userCaller('usr_st', ['flag:write', 'flag:read@staging'])

test('a rollback to a production change needs flag:read in production, and copies nothing into staging', async () => {
  const w = await world()
  const revision = inEnv(w.s, 'staging').revision
  expect(await failureOf(w.s.audit.rollback(stagingOnly, 'secret/x', 2, undefined, 'staging'))).toMatchObject({
    code: 'FORBIDDEN',
    details: { required: 'flag:read@production' },
  })
  expect(inEnv(w.s, 'staging')).toMatchObject({ value: 1, revision })
})

test('a rollback naming no environment writes the default one, which the caller must read', async () => {
  const w = await world()
  await w.s.flags.update(admin, 'secret/x', { value: 3 }, undefined, undefined, 'staging') // revision 4, staging's
  expect(await failureOf(w.s.audit.rollback(stagingOnly, 'secret/x', 1))).toMatchObject({ code: 'FORBIDDEN' })
  expect(inEnv(w.s, 'production').value).toBe(6)
  // its own environment's change, rolled back there, is its to undo
  await w.s.flags.update(admin, 'secret/x', { value: 4 }, undefined, undefined, 'staging')
  expect(await w.s.audit.rollback(stagingOnly, 'secret/x', 4, undefined, 'staging')).toMatchObject({ value: 3 })
  expect(inEnv(w.s, 'production').value).toBe(6)
})

test('a rollback to a shared change (whose view may be any environment) needs flag:read in every environment', async () => {
  const w = await world()
  await w.s.flags.update(admin, 'secret/x', { description: 'shared' }) // revision 4, shown as production sees it
  expect(await failureOf(w.s.audit.rollback(stagingOnly, 'secret/x', 4, undefined, 'staging'))).toMatchObject({ code: 'FORBIDDEN' })
  expect(inEnv(w.s, 'staging').value).toBe(1)
  const everywhere = userCaller('usr_all', ['flag:write', 'flag:read@staging', 'flag:read@production', 'flag:read@development'])
  expect(await w.s.audit.rollback(everywhere, 'secret/x', 4, undefined, 'staging')).toMatchObject({ value: 6 })
})

test('a write-only caller (no flag:read anywhere) may roll back what it may write, in the environments it writes', async () => {
  const w = await world()
  const stagingWriter = userCaller('usr_sw', ['flag:write@staging'])
  expect(await failureOf(w.s.audit.rollback(stagingWriter, 'secret/x', 2, undefined, 'staging'))).toMatchObject({
    details: { required: 'flag:write@production' },
  })
  expect(inEnv(w.s, 'staging').value).toBe(1)
  const writer = userCaller('usr_w', ['flag:write'])
  expect(await w.s.audit.rollback(writer, 'secret/x', 2, undefined, 'staging')).toMatchObject({ value: 5 })
})

test('a promotion of a prefix or of all flags takes only the flags a confined caller may see', async () => {
  const w = await world()
  await w.s.flags.create(admin, { name: 'app/a', type: 'INTEGER', value: 7 }, 'development')
  const confined = userCaller('usr_app', ['flag:read', 'flag:write'], { flagPrefixes: ['app/'] })
  const bySecret = await w.s.environments.promote(confined, 'staging', { from: 'production', prefix: 's', dryRun: true })
  expect(bySecret).toEqual({ dryRun: true, changes: [], unchanged: 0 })
  const all = await w.s.environments.promote(confined, 'staging', { from: 'development' })
  expect(all).toMatchObject({ changes: [{ name: 'app/a' }], unchanged: 0 })
  expect(inEnv(w.s, 'staging')).toMatchObject({ value: 1 })
  // a hidden flag named outright answers as a missing one
  const hidden = await failureOf(w.s.environments.promote(confined, 'staging', { from: 'production', flags: ['secret/x'] }))
  const missing = await failureOf(w.s.environments.promote(confined, 'staging', { from: 'production', flags: ['app/none'] }))
  expect(hidden).toMatchObject({ code: missing.code, details: missing.details })
  expect(hidden.message).toBe(missing.message.replace('app/none', 'secret/x'))
})

test('a PUT answers the view it writes only to a reader of it: an empty one, or a change, of production by a staging reader is 403', async () => {
  const w = await world()
  const revision = inEnv(w.s, 'production').revision
  for (const patch of [{}, { enabled: true }, { value: 7 }])
    expect(await failureOf(w.s.flags.update(stagingOnly, 'secret/x', patch, undefined, undefined, 'production'))).toMatchObject({
      code: 'FORBIDDEN',
      details: { required: 'flag:read@production' },
    })
  expect(inEnv(w.s, 'production')).toMatchObject({ value: 6, revision })
  // its own environment it reads and writes; a write-only caller is answered the view it writes
  expect(await w.s.flags.update(stagingOnly, 'secret/x', { value: 2 }, undefined, undefined, 'staging')).toMatchObject({ value: 2 })
  expect(await w.s.flags.update(userCaller('usr_w', ['flag:write']), 'secret/x', {}, undefined, undefined, 'production')).toMatchObject({
    value: 6,
  })
})

test("a promotion answers the target's states as they were: it needs flag:read there too, dry run or not", async () => {
  const w = await world()
  const revision = inEnv(w.s, 'production').revision
  for (const dryRun of [true, false])
    expect(await failureOf(w.s.environments.promote(stagingOnly, 'production', { from: 'staging', dryRun }))).toMatchObject({
      code: 'FORBIDDEN',
      details: { required: 'flag:read@production' },
    })
  expect(inEnv(w.s, 'production')).toMatchObject({ value: 6, revision })
  const reader = userCaller('usr_r', ['flag:write', 'flag:read@staging', 'flag:read@production'])
  expect(await w.s.environments.promote(reader, 'production', { from: 'staging', dryRun: true })).toMatchObject({
    changes: [{ name: 'secret/x', diff: { value: { before: 6, after: 1 } } }],
  })
})

test("a flag's history shows a reader of some environments their entries and the shared ones, without another environment's state", async () => {
  const w = await world()
  await w.s.flags.update(admin, 'secret/x', { value: 3 }, undefined, undefined, 'staging')
  await w.s.flags.update(admin, 'secret/x', { description: 'shared words' }, undefined, undefined, 'production')
  await w.s.flags.update(admin, 'secret/x', { metadata: { team: 'core' } })
  const { entries } = await w.s.audit.list(stagingOnly.principal, { flag: 'secret/x' })
  // staging's own change and the shared ones (the create too): never production's value (5 or 6) or its other state
  expect(entries.map((e) => [e.environment, e.revision])).toEqual([
    [null, 6],
    [null, 5],
    ['staging', 4],
    [null, 1],
  ])
  for (const e of entries.filter((x) => x.environment === null))
    for (const side of [e.before, e.after].filter((x) => x !== null)) {
      expect(
        Object.keys(side ?? {}).filter((k) => ['valueExists', 'value', 'enabled', 'targeting', 'chancePercentB', 'rollout'].includes(k)),
      ).toEqual([])
      expect(side).toMatchObject({ name: 'secret/x', type: 'INTEGER' })
    }
  expect(entries[1]?.after).toMatchObject({ description: 'shared words' })
  // a reader of every environment, one by one, sees the entries whole, as a reader of all does
  const everywhere = userCaller('usr_all', ['flag:read@staging', 'flag:read@production', 'flag:read@development'])
  const whole = await w.s.audit.list(everywhere.principal, { flag: 'secret/x' })
  const all = await w.s.audit.list(admin.principal, { flag: 'secret/x' })
  expect(whole.entries).toEqual(all.entries)
  expect(all.entries[0]?.after).toMatchObject({ value: 6 })
})
