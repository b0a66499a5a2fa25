/**
 * Who a change request acts for (docs/change-control.md#who-applies): an approval by the author, or
 * by a token the author created, is refused; applying uses the rights the applier holds at that
 * moment, and a scheduled request acts as its author as the author stands now, failing with the
 * reason when the author may no longer make it.
 */

import { afterEach, expect, test } from 'bun:test'
import type { Caller, Principal } from '../../src/domain/principal.ts'
import { createTestApp, SYSTEM, type TestApp } from '../helpers/test-app.ts'

let apps: TestApp[] = []
afterEach(async () => {
  for (const a of apps) await a.close()
  apps = []
})

/** production (protected, one approval) with flag `f` = 1; a clock the test moves; users made as stored rows. */
async function world() {
  // the clock starts at the present (sessions are judged by it) and moves only when told
  let ms = Date.now()
  const a = await createTestApp({ FLAGD_ENVIRONMENT: 'production' }, { now: () => new Date(ms) })
  apps.push(a)
  const s = a.app.services
  await s.flags.create(SYSTEM, { name: 'f', type: 'INTEGER', value: 1 })
  await s.environments.put(SYSTEM, 'production', { protected: true, requiredApprovals: 1 })
  /** A caller with the permissions `name` holds in the store now (as each request resolves them). */
  const as = (id: string): Caller => {
    const row = s.users.get(SYSTEM.principal, id)
    const principal: Principal = {
      kind: 'user',
      userId: row.id,
      username: row.username,
      sessionId: `ses_${row.id}`,
      permissions: row.permissions,
      flagPrefixes: [],
    }
    return { principal, requestId: `req_${row.username}` }
  }
  const make = async (username: string, permissions: string[]) =>
    (await s.users.create(SYSTEM, { username, password: `${username}-password`, permissions })).id
  const author = await make('author', ['flag:read', 'flag:write', 'flag:approve@production', 'token:write'])
  const lead = await make('lead', ['flag:read', 'flag:approve@production'])
  const request = async (extra: Record<string, unknown> = {}) =>
    (
      await s.changeRequests.create(as(author), {
        environment: 'production',
        title: 'raise f',
        changes: [{ flag: 'f', set: { value: 2 } }],
        ...extra,
      })
    ).id
  return { a, s, as, author, lead, request, advance: (by: number) => (ms += by), now: () => ms }
}

const value = (t: TestApp) => t.app.services.flags.get(SYSTEM.principal, 'f', 'production').value

test('an author approves nothing of their own through a token they created, nor through a token that token created', async () => {
  const { s, as, author, lead, request } = await world()
  const id = await request()
  const minted = await s.apiTokens.create(as(author), {
    name: 'approver',
    permissions: ['flag:read', 'flag:approve@production', 'token:write'],
  })
  const token: Caller = { principal: s.apiTokens.principalById(minted.id), requestId: 'req_token' }
  expect(await s.changeRequests.approve(token, id, {}).catch((err) => err)).toMatchObject({ code: 'FORBIDDEN' })
  const grandchild = await s.apiTokens.create(token, { name: 'approver2', permissions: ['flag:approve@production'] })
  const second: Caller = { principal: s.apiTokens.principalById(grandchild.id), requestId: 'req_token2' }
  expect(await s.changeRequests.approve(second, id, {}).catch((err) => err)).toMatchObject({ code: 'FORBIDDEN' })
  expect(await s.changeRequests.reject(token, id, { comment: 'no' }).catch((err) => err)).toMatchObject({ code: 'FORBIDDEN' })
  expect(s.changeRequests.get(SYSTEM.principal, id)).toMatchObject({ state: 'open', approvals: [] })
  // someone else approves
  expect((await s.changeRequests.approve(as(lead), id, {})).state).toBe('approved')
})

test('an author reduced to reading applies nothing of their approved request; an approver still may', async () => {
  const t = await world()
  const { s, as, author, lead, request } = t
  const id = await request()
  await s.changeRequests.approve(as(lead), id, {})
  await s.users.update(SYSTEM, author, { permissions: ['flag:read'] })
  const refused = await s.changeRequests.apply(as(author), id).catch((err) => err)
  expect(refused).toMatchObject({ code: 'FORBIDDEN' })
  expect(value(t.a)).toBe(1)
  expect(s.changeRequests.get(SYSTEM.principal, id).state).toBe('approved')
  expect((await s.changeRequests.apply(as(lead), id)).state).toBe('applied')
  expect(value(t.a)).toBe(2)
})

for (const [what, lose] of [
  ['lost flag:write', (t: Awaited<ReturnType<typeof world>>) => t.s.users.update(SYSTEM, t.author, { permissions: ['flag:read'] })],
  ['was deleted', (t: Awaited<ReturnType<typeof world>>) => t.s.users.remove(SYSTEM, t.author)],
] as const)
  test(`a scheduled request whose author ${what} fails at its time with the reason, and is audited as failed`, async () => {
    const t = await world()
    const { s, as, lead, request } = t
    const at = new Date(t.now() + 60_000).toISOString()
    const id = await request({ scheduledAt: at })
    expect((await s.changeRequests.approve(as(lead), id, {})).state).toBe('scheduled')
    await lose(t)
    t.advance(61_000)
    const [outcome] = await s.changeRequests.applyDue()
    expect(outcome?.failureReason).toContain('author')
    expect(s.changeRequests.get(SYSTEM.principal, id)).toMatchObject({ state: 'failed', failureReason: outcome?.failureReason })
    expect(value(t.a)).toBe(1)
    const { entries } = await s.audit.list(SYSTEM.principal, { limit: 5 })
    expect(entries.map((e) => e.action)).toContain('change-request.failed')
  })

test('a scheduled request whose author still may is applied at its time, as the author', async () => {
  const t = await world()
  const { s, as, lead, request } = t
  const id = await request({ scheduledAt: new Date(t.now() + 60_000).toISOString() })
  await s.changeRequests.approve(as(lead), id, {})
  t.advance(61_000)
  const [outcome] = await s.changeRequests.applyDue()
  expect(outcome?.request.state).toBe('applied')
  expect(value(t.a)).toBe(2)
})

test("a request made through a token is its maker's: they approve it neither themselves nor through a sibling token", async () => {
  const { s, as, author, lead } = await world()
  const maker = await s.apiTokens.create(as(author), {
    name: 'ci',
    permissions: ['flag:read', 'flag:write', 'flag:approve@production'],
  })
  const sibling = await s.apiTokens.create(as(author), { name: 'approver', permissions: ['flag:approve@production'] })
  const viaToken: Caller = { principal: s.apiTokens.principalById(maker.id), requestId: 'req_ci' }
  const { id } = await s.changeRequests.create(viaToken, {
    environment: 'production',
    title: 'raise f',
    changes: [{ flag: 'f', set: { value: 2 } }],
  })
  expect(await s.changeRequests.approve(as(author), id, {}).catch((err) => err)).toMatchObject({ code: 'FORBIDDEN' })
  const viaSibling: Caller = { principal: s.apiTokens.principalById(sibling.id), requestId: 'req_sibling' }
  expect(await s.changeRequests.approve(viaSibling, id, {}).catch((err) => err)).toMatchObject({ code: 'FORBIDDEN' })
  expect(s.changeRequests.get(SYSTEM.principal, id)).toMatchObject({ state: 'open', approvals: [] })
  expect((await s.changeRequests.approve(as(lead), id, {})).state).toBe('approved')
})

test('one person is one approval: their tokens do not count as a second approver', async () => {
  const { s, as, lead, request } = await world()
  await s.environments.put(SYSTEM, 'production', { requiredApprovals: 2 })
  await s.users.update(SYSTEM, lead, { permissions: ['flag:read', 'flag:approve@production', 'token:write'] })
  const id = await request()
  expect((await s.changeRequests.approve(as(lead), id, {})).state).toBe('open')
  const second = await s.apiTokens.create(as(lead), { name: 'second voice', permissions: ['flag:approve@production'] })
  const viaToken: Caller = { principal: s.apiTokens.principalById(second.id), requestId: 'req_second' }
  expect(await s.changeRequests.approve(viaToken, id, {}).catch((err) => err)).toMatchObject({ code: 'CONFLICT' })
  expect(s.changeRequests.get(SYSTEM.principal, id)).toMatchObject({ state: 'open' })
  expect(s.changeRequests.get(SYSTEM.principal, id).approvals).toHaveLength(1)
})
