/**
 * Environments as a use case (docs/environments.md): made, changed and removed with
 * `environment:write`; a new one starts as a copy of the default's (or `copyFrom`'s) states; each
 * environment's state of a flag is its own while the definition is shared; permissions per
 * environment; compare and promote.
 */

import { expect, test } from 'bun:test'
import { toFlagResource } from '../../src/domain/flag.ts'
import { createEnvironmentService } from '../../src/services/environment-service.ts'
import type { Services } from '../../src/services/services.ts'
import { failureOf, tempServices, userCaller } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const worlds = tempServices()
const admin = userCaller('usr_admin', ['flag:read', 'flag:write', 'environment:write'])

/** development (the default) and staging, made a minute apart; `f` (INTEGER 0..10) = 1 in development, 2 in staging. */
async function world() {
  const w = await worlds.open({ env: { FLAGD_ENVIRONMENT: 'development' } })
  await w.s.flags.create(admin, { name: 'f', type: 'INTEGER', value: 1, minValue: 0, maxValue: 10 })
  w.advance(60_000)
  await w.s.environments.put(admin, 'staging', { description: 'before production' })
  await w.s.flags.update(admin, 'f', { value: 2 }, undefined, undefined, 'staging')
  return w
}

const inEnv = (s: Services, env: string, name = 'f') => s.flags.get(SYSTEM.principal, name, env)
const environments = (s: Services) => s.environments.list(SYSTEM).map((e) => e.name)

test('an environment is created once and changed after; the list shows the default first, in order of making', async () => {
  const w = await world()
  w.advance(60_000)
  const made = await w.s.environments.put(admin, 'production', { protected: true, requiredApprovals: 2 })
  expect(made).toMatchObject({ created: true, environment: { name: 'production', protected: true, requiredApprovals: 2, default: false } })
  const changed = await w.s.environments.put(admin, 'production', { description: 'live' })
  expect(changed).toMatchObject({ created: false, environment: { description: 'live', protected: true, requiredApprovals: 2 } })
  expect(w.s.environments.list(SYSTEM).map((e) => [e.name, e.default])).toEqual([
    ['development', true],
    ['staging', false],
    ['production', false],
  ])
})

test("a new environment starts with the default's states, or copyFrom's, and no flag's revision moves", async () => {
  const w = await world()
  const revision = inEnv(w.s, 'development').revision
  await w.s.environments.put(admin, 'qa', {})
  await w.s.environments.put(admin, 'production', { copyFrom: 'staging' })
  expect(inEnv(w.s, 'qa')).toMatchObject({ value: 1, revision })
  expect(inEnv(w.s, 'production')).toMatchObject({ value: 2, revision })
  expect(w.s.environments.statesOf(SYSTEM, 'f')).toMatchObject({
    development: { value: 1 },
    staging: { value: 2 },
    qa: { value: 1 },
    production: { value: 2 },
  })
})

test('a bad body or name is refused naming each field, and nothing is made', async () => {
  const w = await world()
  const err = await failureOf(w.s.environments.put(admin, 'qa', { requiredApprovals: 11, protected: 'yes', descripton: 'x' }))
  expect(err).toMatchObject({ code: 'INVALID_REQUEST' })
  expect((err.details.errors as { field: string }[]).map((p) => p.field).sort()).toEqual(['descripton', 'protected', 'requiredApprovals'])
  for (const name of ['compare', 'has space', ''])
    expect(await failureOf(w.s.environments.put(admin, name, {}))).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'name' } })
  expect(await failureOf(w.s.environments.put(admin, 'qa', { copyFrom: 'nowhere' }))).toMatchObject({
    details: { field: 'copyFrom' },
  })
  expect(await failureOf(w.s.environments.put(admin, 'staging', { copyFrom: 'development' }))).toMatchObject({
    details: { field: 'copyFrom' },
  })
  expect(environments(w.s)).toEqual(['development', 'staging'])
})

test('at most 20 environments', async () => {
  const w = await world()
  for (let i = 3; i <= 20; i++) await w.s.environments.put(admin, `e${i}`, {})
  expect(await failureOf(w.s.environments.put(admin, 'e21', {}))).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'name' } })
  expect(environments(w.s)).toHaveLength(20)
})

test('making, changing and removing need environment:write', async () => {
  const w = await world()
  const writer = userCaller('usr_writer', ['flag:read', 'flag:write'])
  expect(await failureOf(w.s.environments.put(writer, 'qa', {}))).toMatchObject({
    code: 'FORBIDDEN',
    details: { required: 'environment:write' },
  })
  expect(await failureOf(w.s.environments.put(writer, 'staging', { protected: true }))).toMatchObject({ code: 'FORBIDDEN' })
  expect(await failureOf(w.s.environments.remove(writer, 'staging'))).toMatchObject({ code: 'FORBIDDEN' })
  expect(w.s.environments.list(writer).find((e) => e.name === 'staging')?.protected).toBe(false)
})

test('removing drops its states; the default one, an unknown one, or one a grant names is refused', async () => {
  const w = await world()
  expect(await failureOf(w.s.environments.remove(admin, 'development'))).toMatchObject({ code: 'CONFLICT' })
  expect(await failureOf(w.s.environments.remove(admin, 'nowhere'))).toMatchObject({ code: 'NOT_FOUND' })
  await w.s.users.create(SYSTEM, { username: 'dev', password: 'dev-password-1', permissions: ['flag:read', 'flag:write@staging'] })
  const named = await failureOf(w.s.environments.remove(admin, 'staging'))
  expect(named).toMatchObject({ code: 'CONFLICT', details: { usedBy: ['user dev'] } })
  expect(environments(w.s)).toEqual(['development', 'staging'])
  const revision = inEnv(w.s, 'development').revision
  await w.s.environments.put(admin, 'qa', {})
  await w.s.flags.update(admin, 'f', { value: 7 }, undefined, undefined, 'qa')
  await w.s.environments.remove(admin, 'qa')
  expect(await failureOf(() => inEnv(w.s, 'qa'))).toMatchObject({ code: 'NOT_FOUND' })
  expect(Object.keys(w.s.environments.statesOf(SYSTEM, 'f'))).toEqual(['development', 'staging'])
  // a namesake starts afresh from the default, not with the old states
  await w.s.environments.put(admin, 'qa', {})
  expect(inEnv(w.s, 'qa')).toMatchObject({ value: 1 })
  expect(inEnv(w.s, 'development').revision).toBe(revision + 1)
})

test('a state set in one environment leaves the others; a shared field changes every one', async () => {
  const w = await world()
  await w.s.flags.update(admin, 'f', { value: 3, enabled: false }, undefined, undefined, 'staging')
  expect(inEnv(w.s, 'development')).toMatchObject({ value: 1, enabled: true })
  expect(inEnv(w.s, 'staging')).toMatchObject({ value: 3, enabled: false })
  await w.s.flags.update(admin, 'f', { description: 'retries', defaultValue: 4 }, undefined, undefined, 'staging')
  for (const env of ['development', 'staging']) expect(inEnv(w.s, env)).toMatchObject({ description: 'retries', defaultValue: 4 })
  // one revision for the flag, counting every change
  expect(inEnv(w.s, 'development').revision).toBe(inEnv(w.s, 'staging').revision)
})

test("a shared constraint that another environment's value breaks is refused, naming that environment", async () => {
  const w = await world()
  await w.s.flags.update(admin, 'f', { value: 9 }, undefined, undefined, 'staging')
  const err = await failureOf(w.s.flags.update(admin, 'f', { maxValue: 5 }))
  expect(err).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(JSON.stringify(err.details)).toContain('environments.staging.value')
  expect(inEnv(w.s, 'development').maxValue).toBe(10)
})

test("a type change resets the other environments' states: no value, enabled, no rule", async () => {
  const w = await world()
  await w.s.flags.update(admin, 'f', { enabled: false }, undefined, undefined, 'staging')
  await w.s.flags.update(admin, 'f', { type: 'STRING', value: 'x' })
  expect(inEnv(w.s, 'development')).toMatchObject({ type: 'STRING', value: 'x', valueExists: true })
  const staging = inEnv(w.s, 'staging')
  expect(staging).toMatchObject({ type: 'STRING', valueExists: false, enabled: true })
  expect(staging.targeting).toBeUndefined()
})

test("a flag created in one environment has the body's state there and the type's defaults elsewhere", async () => {
  const w = await world()
  const made = await w.s.flags.create(admin, { name: 'g', type: 'BOOLEAN', value: true, enabled: false }, 'staging')
  expect(made).toMatchObject({ value: true, enabled: false })
  expect(inEnv(w.s, 'development', 'g')).toMatchObject({ valueExists: false, enabled: true })
  await w.s.flags.create(admin, { name: 'h', type: 'BOOLEAN', value: true })
  for (const env of ['development', 'staging']) expect(inEnv(w.s, env, 'h')).toMatchObject({ value: true })
})

test('naming the default environment on a create is naming an environment: the others start with the type defaults', async () => {
  const w = await world()
  const made = await w.s.flags.create(admin, { name: 'g', type: 'BOOLEAN', value: true, enabled: false }, 'development')
  expect(made).toMatchObject({ value: true, enabled: false, revision: 1 })
  expect(inEnv(w.s, 'development', 'g')).toMatchObject({ value: true, enabled: false })
  expect(inEnv(w.s, 'staging', 'g')).toMatchObject({ valueExists: false, enabled: true })
})

test('an unknown environment is 404 for every flag use case, and nothing changes', async () => {
  const w = await world()
  const revision = inEnv(w.s, 'development').revision
  for (const call of [
    () => inEnv(w.s, 'nowhere'),
    () => w.s.flags.list(SYSTEM.principal, '', 'nowhere'),
    () => w.s.flags.create(admin, { name: 'g', type: 'BOOLEAN' }, 'nowhere'),
    () => w.s.flags.update(admin, 'f', { value: 5 }, undefined, undefined, 'nowhere'),
    () => w.s.environments.statesOf(SYSTEM, 'f', 'nowhere'),
  ])
    expect(await failureOf(call)).toMatchObject({ code: 'NOT_FOUND' })
  expect(inEnv(w.s, 'development')).toMatchObject({ value: 1, revision })
  expect(w.s.flags.exists('g')).toBe(false)
})

test('per-environment permissions: a staging writer moves staging alone and no shared field; reading elsewhere is 403 naming it', async () => {
  const w = await world()
  await w.s.environments.put(admin, 'production', {})
  const dev = userCaller('usr_dev', ['flag:read@staging', 'flag:read@development', 'flag:write@staging'])
  expect(await w.s.flags.update(dev, 'f', { value: 5 }, undefined, undefined, 'staging')).toMatchObject({ value: 5 })
  expect(await failureOf(w.s.flags.update(dev, 'f', { value: 5 }))).toMatchObject({
    code: 'FORBIDDEN',
    details: { required: 'flag:write@development' },
  })
  expect(await failureOf(w.s.flags.update(dev, 'f', { description: 'x' }, undefined, undefined, 'staging'))).toMatchObject({
    code: 'FORBIDDEN',
    details: { required: 'flag:write' },
  })
  expect(await failureOf(w.s.flags.create(dev, { name: 'g', type: 'BOOLEAN' }, 'staging'))).toMatchObject({ code: 'FORBIDDEN' })
  expect(await failureOf(w.s.flags.remove(dev, 'f', undefined, 'staging'))).toMatchObject({ code: 'FORBIDDEN' })
  expect(await failureOf(() => w.s.flags.get(dev.principal, 'f', 'production'))).toMatchObject({
    code: 'FORBIDDEN',
    details: { required: 'flag:read@production' },
  })
  expect(Object.keys(w.s.environments.statesOf(dev, 'f'))).toEqual(['development', 'staging'])
  // a form sends the shared fields unchanged beside a new value: a state change only
  const form = { ...toFlagResource(inEnv(w.s, 'staging'), 0), value: 6 }
  expect(await w.s.flags.update(dev, 'f', form, undefined, undefined, 'staging')).toMatchObject({ value: 6 })
  expect(inEnv(w.s, 'development')).toMatchObject({ value: 1, description: '' })
})

test('compare says which environment changed last: a target changed after the source is ahead', async () => {
  const w = await world()
  // staging changed at revision 2, development not since it was made: staging is ahead
  expect(w.s.environments.compare(admin, 'staging', 'development')[0]?.revisions).toEqual({ from: 2, to: 1 })
  // a hotfix straight into development: now the target is ahead, and promoting would undo it
  await w.s.flags.update(admin, 'f', { value: 7 }, undefined, undefined, 'development')
  expect(w.s.environments.compare(admin, 'staging', 'development')).toEqual([
    { name: 'f', fields: { value: { from: 2, to: 7 } }, revisions: { from: 2, to: 3 } },
  ])
  // a shared field moves every environment: neither is ahead
  await w.s.flags.update(admin, 'f', { description: 'the limit' })
  expect(w.s.environments.compare(admin, 'staging', 'development')[0]?.revisions).toEqual({ from: 4, to: 4 })
})

test('compare lists the differing state fields; a dry-run promotion answers the same as the promotion and changes nothing', async () => {
  const w = await world()
  await w.s.flags.create(admin, { name: 'same', type: 'BOOLEAN', value: true })
  expect(w.s.environments.compare(admin, 'staging', 'development')).toEqual([
    { name: 'f', fields: { value: { from: 2, to: 1 } }, revisions: { from: 2, to: 1 } },
  ])
  const revision = inEnv(w.s, 'development').revision
  const dry = await w.s.environments.promote(admin, 'development', { from: 'staging', dryRun: true })
  expect(inEnv(w.s, 'development')).toMatchObject({ value: 1, revision })
  const done = await w.s.environments.promote(admin, 'development', { from: 'staging' })
  expect({ ...dry, dryRun: false }).toEqual(done)
  expect(done).toMatchObject({ unchanged: 1, changes: [{ name: 'f', diff: { value: { before: 1, after: 2 } } }] })
  expect(inEnv(w.s, 'development')).toMatchObject({ value: 2, revision: revision + 1 })
  expect(w.s.environments.compare(admin, 'staging', 'development')).toEqual([])
})

test('promoting needs write in the target and read in the source', async () => {
  const w = await world()
  const stagingWriter = userCaller('usr_sw', ['flag:read', 'flag:write@staging'])
  expect(await failureOf(w.s.environments.promote(stagingWriter, 'development', { from: 'staging' }))).toMatchObject({
    code: 'FORBIDDEN',
  })
  const blind = userCaller('usr_blind', ['flag:read@staging', 'flag:write@staging'])
  expect(await failureOf(w.s.environments.promote(blind, 'staging', { from: 'development' }))).toMatchObject({ code: 'FORBIDDEN' })
  expect(inEnv(w.s, 'development').value).toBe(1)
  expect(inEnv(w.s, 'staging').value).toBe(2)
  expect(await w.s.environments.promote(stagingWriter, 'staging', { from: 'development' })).toMatchObject({ changes: [{ name: 'f' }] })
  expect(inEnv(w.s, 'staging').value).toBe(1)
  // comparing needs read in both
  expect(
    await failureOf(() => w.s.environments.compare(userCaller('usr_sr', ['flag:read@staging']), 'staging', 'development')),
  ).toMatchObject({
    code: 'FORBIDDEN',
  })
})

test('an environment with pending change requests is not removed: 409 names them, so none lands in a namesake later', async () => {
  const w = await world()
  w.advance(1_000)
  await w.s.environments.put(admin, 'qa', {})
  const made = await w.s.changeRequests.create(admin, { environment: 'qa', title: 't', changes: [{ flag: 'f', set: { value: 2 } }] })
  expect(made.state).toBe('approved')
  const refused = await failureOf(w.s.environments.remove(admin, 'qa'))
  expect(refused).toMatchObject({ code: 'CONFLICT', details: { usedBy: [`change request ${made.id}`] } })
  expect(environments(w.s)).toEqual(['development', 'staging', 'qa'])
  // once it is settled (cancelled, rejected, applied, failed), the environment goes
  await w.s.changeRequests.cancel(admin, made.id)
  await w.s.environments.remove(admin, 'qa')
  expect(environments(w.s)).toEqual(['development', 'staging'])
  expect(await failureOf(w.s.changeRequests.apply(admin, made.id))).toMatchObject({ code: 'CONFLICT' })
  expect(Object.keys(w.s.environments.statesOf(SYSTEM, 'f'))).toEqual(['development', 'staging'])
})

test('a default named anew in the config starts as a copy of the previous default, not of the environment made first', async () => {
  const w = await world()
  // what the daemon does at start with config environment `name`
  const restartWith = (name: string) => createEnvironmentService(w.store, name, () => new Date(w.ms())).ensureDefault(SYSTEM)
  const marked = () => [...w.store.committed().environments.values()].filter((e) => e.default === true).map((e) => e.name)
  expect(marked()).toEqual(['development'])
  // an existing environment becomes the default: marked, nothing copied
  expect(await restartWith('staging')).toEqual({ previous: 'development', made: false })
  expect(marked()).toEqual(['staging'])
  expect((await inEnv(w.s, 'development')).value).toBe(1)
  await w.s.environments.put(admin, 'staging', { protected: true, requiredApprovals: 1 })
  w.advance(60_000)
  // made anew: a copy of the previous default, its protection too (applications are not moved off it unguarded)
  expect(await restartWith('production')).toEqual({ previous: 'staging', made: true })
  expect(marked()).toEqual(['production'])
  expect((await inEnv(w.s, 'production')).value).toBe(2)
  expect(w.s.environments.list(SYSTEM).find((e) => e.name === 'production')).toMatchObject({ protected: true, requiredApprovals: 1 })
  expect(await restartWith('production')).toBeUndefined()
})
