/**
 * Archiving through a change request (docs/change-control.md#change-requests): `{flag, archive: true}`
 * is checked when made (an archived flag, or one others require, is refused), shows its diff, and
 * once approved and applied archives the flag in every environment, audited as `flag.archived`.
 */

import { expect, test } from 'bun:test'
import { failureOf, storedUser, tempServices, userCaller } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const worlds = tempServices()
const admin = userCaller('usr_admin', ['flag:read', 'flag:write', 'flag:bypass', 'environment:write'])

/** production (the default, protected) and staging; flags `old`, `base` and `child` (which requires `base`). */
async function world() {
  const w = await worlds.open({ env: { FLAGD_ENVIRONMENT: 'production' } })
  const { s } = w
  for (const name of ['old', 'base']) await s.flags.create(admin, { name, type: 'BOOLEAN', value: true })
  await s.flags.create(admin, { name: 'child', type: 'BOOLEAN', value: true, prerequisites: [{ flag: 'base', variants: ['true'] }] })
  await s.environments.put(admin, 'staging', {})
  await s.environments.put(admin, 'production', { protected: true, requiredApprovals: 1 })
  const author = await storedUser(s, 'author', ['flag:read', 'flag:write'])
  const lead = await storedUser(s, 'lead', ['flag:read', 'flag:approve@production'])
  const request = (changes: unknown[], environment = 'production') =>
    s.changeRequests.create(author.as(), { environment, title: 'retire', changes })
  return { ...w, author, lead, request }
}

test('an author cannot archive in a protected environment, but an archive request approved there archives the flag', async () => {
  const w = await world()
  expect(await failureOf(w.s.flags.archive(w.author.as(), 'old'))).toMatchObject({ code: 'CHANGE_REQUEST_REQUIRED' })
  const { id } = await w.request([{ flag: 'old', archive: true }])
  expect(w.s.changeRequests.get(SYSTEM.principal, id).changes).toEqual([
    { flag: 'old', set: {}, archive: true, diff: { archived: { before: false, after: true } } },
  ])
  expect(w.s.flags.get(SYSTEM.principal, 'old').archived === true).toBe(false)
  await w.s.changeRequests.approve(w.lead.as(), id, {})
  expect((await w.s.changeRequests.apply(w.author.as(), id)).state).toBe('applied')
  for (const env of ['production', 'staging']) expect(w.s.flags.get(SYSTEM.principal, 'old', env).archived).toBe(true)
  const actions = (await w.s.audit.list(SYSTEM.principal, { flag: 'old', limit: 5 })).entries.map((e) => e.action)
  expect(actions[0]).toBe('flag.archived')
})

test('an archive request is refused for an archived flag, one others require, with set, or from staging', async () => {
  const w = await world()
  await w.s.flags.archive(admin, 'old')
  expect(await failureOf(w.request([{ flag: 'old', archive: true }]))).toMatchObject({ code: 'INVALID_REQUEST' })
  const required = await failureOf(w.request([{ flag: 'base', archive: true }]))
  expect(required).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(JSON.stringify(required)).toContain('child')
  expect(await failureOf(w.request([{ flag: 'base', archive: true, set: { value: false } }]))).toMatchObject({
    code: 'INVALID_REQUEST',
  })
  expect(await failureOf(w.request([{ flag: 'base', archive: true, delete: true }]))).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(await failureOf(w.request([{ flag: 'child', archive: true }], 'staging'))).toMatchObject({ code: 'CHANGE_REQUEST_REQUIRED' })
  expect(w.s.flags.get(SYSTEM.principal, 'child').archived === true).toBe(false)
})

test('an archive request fails when another flag came to require the flag before it was applied', async () => {
  const w = await world()
  const { id } = await w.request([{ flag: 'old', archive: true }])
  await w.s.changeRequests.approve(w.lead.as(), id, {})
  await w.s.flags.create(admin, { name: 'late', type: 'BOOLEAN', value: true, prerequisites: [{ flag: 'old', variants: ['true'] }] })
  const applied = await failureOf(w.s.changeRequests.apply(w.author.as(), id))
  expect(JSON.stringify(applied)).toContain('late')
  expect(w.s.flags.get(SYSTEM.principal, 'old').archived === true).toBe(false)
})
