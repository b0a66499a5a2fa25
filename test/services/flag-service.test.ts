/**
 * The flag use cases (docs/api.md#flags): create, read, partial update, rename, type change and
 * delete, each behind `If-Match`, with every problem named by field, the caller's permissions and
 * flag prefixes, and a rejected request changing nothing.
 */

import { expect, test } from 'bun:test'
import type { Caller } from '../../src/domain/principal.ts'
import type { Services } from '../../src/services/services.ts'
import { failureOf, tempServices, userCaller } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const worlds = tempServices()
const writer = userCaller('usr_writer', ['flag:read', 'flag:write'])
const reader = userCaller('usr_reader', ['flag:read'])

/** `app/retries` (INTEGER 1..10, default 3, value 5) at revision 1. */
async function world() {
  const w = await worlds.open()
  await w.s.flags.create(writer, { name: 'app/retries', type: 'INTEGER', defaultValue: 3, value: 5, minValue: 1, maxValue: 10 })
  return w
}

const get = (s: Services, name: string) => s.flags.get(SYSTEM.principal, name)
const names = (s: Services, as: Caller = SYSTEM, prefix = '') =>
  (JSON.parse(s.flags.list(as.principal, prefix)) as { name: string }[]).map((f) => f.name)

test('a created flag is at revision 1, stamped by the clock, and reads back as written', async () => {
  const w = await world()
  w.advance(60_000)
  const made = await w.s.flags.create(writer, { name: 'app/new_checkout', type: 'BOOLEAN', description: 'New checkout' })
  expect(made).toMatchObject({ name: 'app/new_checkout', revision: 1, valueExists: false, defaultValue: false, enabled: true })
  expect(made.createdAt).toBe(new Date(w.ms()).toISOString())
  expect(get(w.s, 'app/new_checkout')).toMatchObject({ description: 'New checkout', revision: 1, createdAt: made.createdAt })
  expect(names(w.s)).toEqual(['app/new_checkout', 'app/retries'])
})

test('a create with several mistakes names each field and makes nothing', async () => {
  const w = await world()
  const err = await failureOf(w.s.flags.create(writer, { name: 'bad name!', type: 'INTEGER', value: 11, maxValue: 10, vaule: 1 }))
  expect(err).toMatchObject({ code: 'INVALID_REQUEST' })
  const fields = (err.details.errors as { field: string; reason: string }[]).map((p) => p.field)
  expect(fields).toEqual(expect.arrayContaining(['name', 'value', 'vaule']))
  expect(err.details.errors.find((p: { field: string }) => p.field === 'vaule').reason).toContain('"value"')
  expect(names(w.s)).toEqual(['app/retries'])
})

test('a value beside valueExists false, or a missing name, is refused naming the field', async () => {
  const w = await world()
  const both = await failureOf(w.s.flags.create(writer, { name: 'x', type: 'BOOLEAN', valueExists: false, value: true }))
  expect(both).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(JSON.stringify(both.details)).toContain('value')
  const nameless = await failureOf(w.s.flags.create(writer, { type: 'BOOLEAN' }))
  expect(nameless.details).toMatchObject({ field: 'name', reason: 'required' })
  expect(names(w.s)).toEqual(['app/retries'])
})

test('a taken name, or one that is a group of another flag, is 409 naming the field', async () => {
  const w = await world()
  expect(await failureOf(w.s.flags.create(writer, { name: 'app/retries', type: 'BOOLEAN' }))).toMatchObject({
    code: 'CONFLICT',
    details: { field: 'name' },
  })
  expect(await failureOf(w.s.flags.create(writer, { name: 'app', type: 'BOOLEAN' }))).toMatchObject({
    code: 'CONFLICT',
    details: { field: 'name', conflictsWith: 'app/retries' },
  })
  expect(await failureOf(w.s.flags.create(writer, { name: 'app/retries/more', type: 'BOOLEAN' }))).toMatchObject({ code: 'CONFLICT' })
  expect(names(w.s)).toEqual(['app/retries'])
})

test('If-Match: a stale revision is 412 and changes nothing; the current one, a list holding it or * pass', async () => {
  const w = await world()
  await w.s.flags.update(writer, 'app/retries', { value: 6 })
  const stale = await failureOf(w.s.flags.update(writer, 'app/retries', { value: 7 }, [1]))
  expect(stale).toMatchObject({ code: 'PRECONDITION_FAILED' })
  expect(get(w.s, 'app/retries')).toMatchObject({ value: 6, revision: 2 })
  expect(await w.s.flags.update(writer, 'app/retries', { value: 7 }, [2])).toMatchObject({ value: 7, revision: 3 })
  expect(await w.s.flags.update(writer, 'app/retries', { value: 8 }, [1, 3])).toMatchObject({ value: 8, revision: 4 })
  expect(await w.s.flags.update(writer, 'app/retries', { value: 9 }, '*')).toMatchObject({ value: 9, revision: 5 })
})

test('of two writers holding the same revision, exactly one wins', async () => {
  const w = await world()
  const outcomes = await Promise.allSettled([
    w.s.flags.update(writer, 'app/retries', { value: 2 }, [1]),
    w.s.flags.update(writer, 'app/retries', { value: 4 }, [1]),
  ])
  expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1)
  const lost = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult
  expect(lost.reason).toMatchObject({ code: 'PRECONDITION_FAILED' })
  expect(get(w.s, 'app/retries').revision).toBe(2)
})

test('an update is validated as a whole: every problem listed, nothing changed', async () => {
  const w = await world()
  const err = await failureOf(w.s.flags.update(writer, 'app/retries', { value: 11, defaultValue: 0 }))
  expect(err).toMatchObject({ code: 'INVALID_REQUEST' })
  const problems = err.details.errors as { field: string; reason: string }[]
  expect(problems.map((p) => p.field).sort()).toEqual(['defaultValue', 'value'])
  expect(problems.find((p) => p.field === 'value')?.reason).toContain('maxValue 10')
  expect(get(w.s, 'app/retries')).toMatchObject({ value: 5, defaultValue: 3, revision: 1 })
})

test('an update that changes nothing writes nothing: same revision, same updatedAt', async () => {
  const w = await world()
  const before = get(w.s, 'app/retries')
  w.advance(5_000)
  // what a script sends back after a GET: the read-only fields are ignored
  const same = await w.s.flags.update(writer, 'app/retries', {
    value: 5,
    revision: 99,
    createdAt: 'x',
    updatedAt: 'y',
  })
  expect(same).toMatchObject({ revision: 1, updatedAt: before.updatedAt })
  const moved = await w.s.flags.update(writer, 'app/retries', { value: 6 })
  expect(moved).toMatchObject({ revision: 2, updatedAt: new Date(w.ms()).toISOString(), createdAt: before.createdAt })
})

test("value null clears the value; defaultValue null means no default (the application's own applies)", async () => {
  const w = await world()
  await w.s.flags.update(writer, 'app/retries', { value: null, minValue: null })
  expect(get(w.s, 'app/retries')).toMatchObject({ valueExists: false, defaultValue: 3 })
  expect(get(w.s, 'app/retries').minValue).toBeUndefined()
  await w.s.flags.update(writer, 'app/retries', { defaultValue: null })
  expect(get(w.s, 'app/retries').defaultValue).toBeNull()
})

test('a rename keeps the history (revision moves on), frees the old name and refuses a taken one', async () => {
  const w = await world()
  await w.s.flags.create(writer, { name: 'other', type: 'BOOLEAN' })
  const renamed = await w.s.flags.update(writer, 'app/retries', { name: 'app/checkout/retries' }, [1])
  expect(renamed).toMatchObject({ name: 'app/checkout/retries', revision: 2, value: 5 })
  expect(await failureOf(() => get(w.s, 'app/retries'))).toMatchObject({ code: 'NOT_FOUND' })
  expect(await failureOf(w.s.flags.update(writer, 'app/checkout/retries', { name: 'other' }))).toMatchObject({
    code: 'CONFLICT',
    details: { field: 'name' },
  })
  expect(await failureOf(w.s.flags.update(writer, 'app/checkout/retries', { name: 'other/x' }))).toMatchObject({ code: 'CONFLICT' })
  expect(names(w.s)).toEqual(['app/checkout/retries', 'other'])
})

test('a type change takes its default, value and constraints from the body only', async () => {
  const w = await world()
  const changed = await w.s.flags.update(writer, 'app/retries', { type: 'STRING', value: 'five' })
  expect(changed).toMatchObject({ type: 'STRING', value: 'five', defaultValue: '', revision: 2 })
  expect(changed.minValue).toBeUndefined()
  expect(changed.maxValue).toBeUndefined()
  // nothing of the old type carries over: back to INTEGER without a value is the type's zero and no value
  await w.s.flags.update(writer, 'app/retries', { type: 'INTEGER' })
  expect(get(w.s, 'app/retries')).toMatchObject({ type: 'INTEGER', defaultValue: 0, valueExists: false })
})

test('a delete behind a stale If-Match is 412 and keeps the flag; a namesake made again starts at revision 1', async () => {
  const w = await world()
  await w.s.flags.update(writer, 'app/retries', { value: 6 })
  expect(await failureOf(w.s.flags.remove(writer, 'app/retries', [1]))).toMatchObject({ code: 'PRECONDITION_FAILED' })
  expect(get(w.s, 'app/retries').value).toBe(6)
  await w.s.flags.remove(writer, 'app/retries', [2])
  expect(await failureOf(() => get(w.s, 'app/retries'))).toMatchObject({ code: 'NOT_FOUND' })
  expect(await failureOf(w.s.flags.remove(writer, 'app/retries'))).toMatchObject({ code: 'NOT_FOUND' })
  expect((await w.s.flags.create(writer, { name: 'app/retries', type: 'BOOLEAN' })).revision).toBe(1)
})

test('without flag:write nothing is written; without flag:read nothing is read', async () => {
  const w = await world()
  for (const write of [
    () => w.s.flags.create(reader, { name: 'x', type: 'BOOLEAN' }),
    () => w.s.flags.update(reader, 'app/retries', { value: 6 }),
    () => w.s.flags.remove(reader, 'app/retries'),
  ])
    expect(await failureOf(write)).toMatchObject({ code: 'FORBIDDEN', details: { required: 'flag:write' } })
  const nobody = userCaller('usr_nobody', ['user:read'])
  expect(await failureOf(() => w.s.flags.get(nobody.principal, 'app/retries'))).toMatchObject({ code: 'FORBIDDEN' })
  expect(await failureOf(() => w.s.flags.list(nobody.principal, ''))).toMatchObject({ code: 'FORBIDDEN' })
  expect(get(w.s, 'app/retries')).toMatchObject({ value: 5, revision: 1 })
})

test('for a caller confined to prefixes, other flags do not exist for reads, and writes out of them are 403', async () => {
  const w = await world()
  await w.s.flags.create(writer, { name: 'mobile/dark_mode', type: 'BOOLEAN' })
  const mobile = userCaller('usr_mobile', ['flag:read', 'flag:write'], { flagPrefixes: ['mobile/'] })
  expect(names(w.s, mobile)).toEqual(['mobile/dark_mode'])
  expect(await failureOf(() => w.s.flags.get(mobile.principal, 'app/retries'))).toMatchObject({ code: 'NOT_FOUND' })
  expect(await failureOf(w.s.flags.update(mobile, 'app/retries', { value: 6 }))).toMatchObject({ code: 'FORBIDDEN' })
  expect(await failureOf(w.s.flags.remove(mobile, 'app/retries'))).toMatchObject({ code: 'FORBIDDEN' })
  expect(await failureOf(w.s.flags.create(mobile, { name: 'web/x', type: 'BOOLEAN' }))).toMatchObject({ code: 'FORBIDDEN' })
  expect(await failureOf(w.s.flags.update(mobile, 'mobile/dark_mode', { name: 'web/dark_mode' }))).toMatchObject({ code: 'FORBIDDEN' })
  expect(await w.s.flags.update(mobile, 'mobile/dark_mode', { value: true })).toMatchObject({ value: true })
  expect(get(w.s, 'app/retries')).toMatchObject({ value: 5, revision: 1 })
  expect(names(w.s)).toEqual(['app/retries', 'mobile/dark_mode'])
})

test('a list ETag moves with every change and differs between scopes', async () => {
  const w = await world()
  const mobile = userCaller('usr_mobile', ['flag:read'], { flagPrefixes: ['mobile/'] })
  const before = w.s.flags.listTag(reader.principal)
  expect(w.s.flags.listTag(mobile.principal)).not.toBe(before)
  await w.s.flags.update(writer, 'app/retries', { value: 6 })
  expect(w.s.flags.listTag(reader.principal)).not.toBe(before)
})

test('the service holds at most limits.maxFlags flags: one more is refused naming the limit', async () => {
  const w = await worlds.open({ env: { FLAGD_LIMITS_MAX_FLAGS: '2' } })
  await w.s.flags.create(writer, { name: 'a', type: 'BOOLEAN' })
  await w.s.flags.create(writer, { name: 'b', type: 'BOOLEAN' })
  const err = await failureOf(w.s.flags.create(writer, { name: 'c', type: 'BOOLEAN' }))
  expect(err).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(err.message).toContain('limits.maxFlags')
  expect(names(w.s)).toEqual(['a', 'b'])
})

test("a confined caller's list, in every environment and under every prefix, holds exactly the flags its prefixes cover", async () => {
  const w = await worlds.open()
  await w.s.environments.put(userCaller('usr_env', ['environment:write']), 'staging', {})
  for (const name of ['mobile/a', 'mobiles', 'mobilex/b', 'web/c']) await w.s.flags.create(writer, { name, type: 'BOOLEAN' })
  const all = ['mobile/a', 'mobiles', 'mobilex/b', 'web/c']
  // a prefix ending in / covers a group; one without it names a flag or a group whole
  const covers = (scope: string, name: string) =>
    scope.endsWith('/') ? name.startsWith(scope) : name === scope || name.startsWith(`${scope}/`)
  for (const scope of ['mobile/', 'mobile', 'mobiles', 'web/'])
    for (const env of [undefined, 'staging'])
      for (const prefix of ['', 'm', 'mobile', 'mobile/', 'web/']) {
        const confined = userCaller('usr_c', ['flag:read'], { flagPrefixes: [scope] })
        const listed = (JSON.parse(w.s.flags.list(confined.principal, prefix, env)) as { name: string }[]).map((f) => f.name)
        expect({ scope, env, prefix, listed }).toEqual({
          scope,
          env,
          prefix,
          listed: all.filter((n) => covers(scope, n) && n.startsWith(prefix)),
        })
      }
})
