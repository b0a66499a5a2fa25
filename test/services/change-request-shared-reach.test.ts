/**
 * Shared fields reach every environment (docs/change-control.md#change-requests): a request carrying
 * them, approved in one protected environment (as many times as the strictest protected one asks),
 * applies them in every other protected one too; an
 * ENUM's values are its variants, so removing one goes through a request like a variant would,
 * while a TAG's values only check what is written and change at once.
 */

import { expect, test } from 'bun:test'
import { person, protectedWorlds } from '../helpers/protected-world.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const dev = person('usr_dev', ['flag:read', 'flag:write'])
const lead = person('usr_lead', ['flag:read', 'flag:approve'])

/** development (default), staging, production (1 approval) and eu (2 approvals), both protected; INTEGER `f`, ENUM `e`, TAG `t`. */
const world = protectedWorlds(async (s) => {
  await s.flags.create(SYSTEM, { name: 'f', type: 'INTEGER', value: 1, defaultValue: 0 })
  await s.flags.create(SYSTEM, { name: 'e', type: 'ENUM', enumValues: ['a', 'b', 'c'], value: 'a', defaultValue: 'a' })
  await s.flags.create(SYSTEM, { name: 't', type: 'TAG', enumValues: ['a', 'b', 'c'], value: ['a'], defaultValue: [] })
  await s.flags.update(SYSTEM, 't', { value: ['c'] }, undefined, undefined, 'production')
})

test('a shared change approved in one protected environment applies in every environment, the other protected one included', async () => {
  const s = await world()
  // made directly, it reaches both protected environments: refused, naming one
  expect(await s.flags.update(dev, 'f', { defaultValue: 5 }, undefined, undefined, 'staging').catch((e) => e)).toMatchObject({
    code: 'CHANGE_REQUEST_REQUIRED',
  })
  const made = await s.changeRequests.create(dev, {
    environment: 'production',
    title: 'd',
    changes: [{ flag: 'f', set: { defaultValue: 5 } }],
  })
  // it reaches eu too, so it waits for the 2 approvals eu asks for (docs/change-control.md#approvals)
  expect((await s.changeRequests.approve(lead, made.id, {})).state).toBe('open')
  expect((await s.changeRequests.approve(person('usr_other', ['flag:read', 'flag:approve']), made.id, {})).state).toBe('approved')
  expect((await s.changeRequests.apply(dev, made.id)).state).toBe('applied')
  for (const env of ['development', 'staging', 'production', 'eu']) expect(s.flags.get(SYSTEM.principal, 'f', env).defaultValue).toBe(5)
})

test('a request of an unprotected environment carrying a shared field is refused, naming the strictest protected one and why', async () => {
  const s = await world()
  const refused = await s.changeRequests
    .create(dev, { environment: 'staging', title: 'add d', changes: [{ flag: 'e', set: { enumValues: ['a', 'b', 'c', 'd'] } }] })
    .catch((e) => e)
  expect(refused).toMatchObject({ code: 'CHANGE_REQUEST_REQUIRED', details: { environment: 'eu' } })
  expect(refused.message).toContain("changes e's enumValues, shared by every environment")
  expect(refused.message).toContain('make it in eu')
  // adding a value changes nothing a protected environment serves: written directly, it needs no request
  expect((await s.flags.update(dev, 'e', { enumValues: ['a', 'b', 'c', 'd'] })).enumValues).toEqual(['a', 'b', 'c', 'd'])
})

test("an ENUM's values are its variants: removing one is refused directly and goes through a change request", async () => {
  const s = await world()
  expect(await s.flags.update(dev, 'e', { enumValues: ['a', 'b'] }).catch((e) => e)).toMatchObject({ code: 'CHANGE_REQUEST_REQUIRED' })
  expect(s.flags.get(SYSTEM.principal, 'e', 'eu').enumValues).toEqual(['a', 'b', 'c'])
  const made = await s.changeRequests.create(dev, {
    environment: 'eu',
    title: 'n',
    changes: [{ flag: 'e', set: { enumValues: ['a', 'b'] } }],
  })
  await s.changeRequests.approve(lead, made.id, {})
  await s.changeRequests.approve(person('usr_other', ['flag:read', 'flag:approve']), made.id, {})
  expect((await s.changeRequests.apply(dev, made.id)).state).toBe('applied')
  for (const env of ['staging', 'production', 'eu']) expect(s.flags.get(SYSTEM.principal, 'e', env).enumValues).toEqual(['a', 'b'])
  // a value a protected environment serves cannot be removed, even through a request (400 naming it)
  const refused = await s.changeRequests
    .create(dev, { environment: 'eu', title: 'x', changes: [{ flag: 'e', set: { enumValues: ['b'] } }] })
    .catch((e) => e)
  expect(refused).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'changes[0].set.defaultValue' } })
})

test("a TAG's values change at once, except one an environment serves, which is refused naming it", async () => {
  const s = await world()
  expect((await s.flags.update(dev, 't', { enumValues: ['a', 'c', 'd'] })).enumValues).toEqual(['a', 'c', 'd'])
  const refused = await s.flags.update(dev, 't', { enumValues: ['a'] }).catch((e) => e)
  expect(refused).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(JSON.stringify(refused.details)).toContain('environments.production.value')
  expect(s.flags.get(SYSTEM.principal, 't', 'production').enumValues).toEqual(['a', 'c', 'd'])
})
