/**
 * Consent holds however a change request is made (docs/change-control.md#approvals): a shared change
 * needs the approvals of the strictest protected environment it reaches, approvals are counted again
 * when it is applied, a confined approver reviews only flags in its scope, and malformed ENUM values
 * are refused with a field-named 400.
 */

import { expect, test } from 'bun:test'
import { person, protectedWorlds } from '../helpers/protected-world.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const dev = person('usr_dev', ['flag:read', 'flag:write'])
const lead = person('usr_lead', ['flag:read', 'flag:approve'])
const boss = person('usr_boss', ['flag:read', 'flag:approve'])

/** development (default), staging, production (1 approval) and eu (2 approvals), both protected; INTEGER `f`, ENUM `e`. */
const world = protectedWorlds(async (s) => {
  await s.flags.create(SYSTEM, { name: 'f', type: 'INTEGER', value: 1, defaultValue: 0 })
  await s.flags.create(SYSTEM, { name: 'team/g', type: 'INTEGER', value: 1, defaultValue: 0 })
  await s.flags.create(SYSTEM, { name: 'e', type: 'ENUM', enumValues: ['a', 'b', 'c'], value: 'a', defaultValue: 'a' })
})

test('a shared change made in a 1-approval environment waits for as many approvals as the strictest protected one needs', async () => {
  const s = await world()
  const made = await s.changeRequests.create(dev, {
    environment: 'production',
    title: 'd',
    changes: [{ flag: 'f', set: { defaultValue: 5 } }],
  })
  expect((await s.changeRequests.approve(lead, made.id, {})).state).toBe('open')
  expect(await s.changeRequests.apply(dev, made.id).catch((e) => e)).toMatchObject({ code: 'CONFLICT' })
  expect(s.flags.get(SYSTEM.principal, 'f', 'eu').defaultValue).toBe(0)
  expect((await s.changeRequests.approve(boss, made.id, {})).state).toBe('approved')
  expect((await s.changeRequests.apply(dev, made.id)).state).toBe('applied')
  expect(s.flags.get(SYSTEM.principal, 'f', 'eu').defaultValue).toBe(5)
})

test('a request approved before its environment asked for more approvals is not applied with too few', async () => {
  const s = await world()
  const made = await s.changeRequests.create(dev, { environment: 'staging', title: 'd', changes: [{ flag: 'f', set: { value: 9 } }] })
  expect(made.state).toBe('approved')
  await s.environments.put(SYSTEM, 'staging', { protected: true, requiredApprovals: 1 })
  const refused = await s.changeRequests.apply(dev, made.id).catch((e) => e)
  expect(refused).toMatchObject({ code: 'CONFLICT', details: { state: 'failed' } })
  expect(refused.details.failureReason).toContain('1 approval')
  expect(s.flags.get(SYSTEM.principal, 'f', 'staging').value).toBe(1)
})

test('a confined approver neither approves nor applies a request of flags outside its prefixes', async () => {
  const s = await world()
  const made = await s.changeRequests.create(dev, { environment: 'production', title: 'd', changes: [{ flag: 'f', set: { value: 3 } }] })
  const confined = person('usr_conf', ['flag:read', 'flag:approve'], ['team/'])
  expect(await s.changeRequests.approve(confined, made.id, {}).catch((e) => e)).toMatchObject({ code: 'NOT_FOUND' })
  expect(await s.changeRequests.reject(confined, made.id, { comment: 'no' }).catch((e) => e)).toMatchObject({ code: 'NOT_FOUND' })
  expect(s.changeRequests.get(SYSTEM.principal, made.id)).toMatchObject({ state: 'open', approvals: [] })
  // confined after approving: it applies nothing outside its scope
  const was = person('usr_conf', ['flag:read', 'flag:approve'])
  await s.changeRequests.approve(was, made.id, {})
  expect(await s.changeRequests.apply(confined, made.id).catch((e) => e)).toMatchObject({ code: 'FORBIDDEN' })
  expect(s.flags.get(SYSTEM.principal, 'f', 'production').value).toBe(1)
  // in scope, it approves as before
  const mine = await s.changeRequests.create(dev, {
    environment: 'production',
    title: 'g',
    changes: [{ flag: 'team/g', set: { value: 3 } }],
  })
  expect((await s.changeRequests.approve(confined, mine.id, {})).state).toBe('approved')
})

test('malformed ENUM values in a request are a 400 naming the field, and change nothing', async () => {
  const s = await world()
  const huge = ['a', 'b', 'c', 'x'.repeat(1_000_000)]
  const many = Array.from({ length: 1001 }, (_, i) => `v${i}`)
  for (const v of ['x', {}, null, 1, ['a', 'a', 'b', 'c'], many, huge, ['a', 'b', 'c', 5], [[]]]) {
    const out = await s.changeRequests
      .create(dev, { environment: 'eu', title: 'x', changes: [{ flag: 'e', set: { enumValues: v } }] })
      .catch((e) => e)
    expect(out).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'changes[0].set.enumValues' } })
  }
  expect(s.changeRequests.list(SYSTEM.principal, {})).toEqual([])
})

test('a request made on a flag that was deleted and made again since fails instead of changing the new flag', async () => {
  const s = await world()
  const made = await s.changeRequests.create(dev, { environment: 'production', title: 'd', changes: [{ flag: 'f', set: { value: 3 } }] })
  await s.changeRequests.approve(lead, made.id, {})
  const bypass = person('usr_by', ['flag:read', 'flag:write', 'flag:bypass'])
  await s.flags.remove(bypass, 'f')
  await s.flags.create(bypass, { name: 'f', type: 'INTEGER', value: 1, defaultValue: 0 })
  const refused = await s.changeRequests.apply(dev, made.id).catch((e) => e)
  expect(refused).toMatchObject({ code: 'CONFLICT', details: { state: 'failed' } })
  expect(refused.details.failureReason).toContain('made again')
  expect(s.flags.get(SYSTEM.principal, 'f', 'production').value).toBe(1)
  // the record keeps which flag it was made on for itself: the API shows what it always showed
  expect(Object.keys(s.changeRequests.get(SYSTEM.principal, made.id))).not.toContain('baseFlagIds')
})
