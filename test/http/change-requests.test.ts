/**
 * Change requests (docs/change-control.md#change-requests): made with their changes checked, approved
 * by others only, edited (approvals cleared), cancelled, rejected, applied all or nothing against
 * the revisions they were made on, and scheduled; every step audited.
 */

import { afterEach, expect, test } from 'bun:test'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let apps: TestApp[] = []
afterEach(async () => {
  for (const a of apps) await a.close()
  apps = []
})

/** production (protected, one approval), staging; flag `f` = 1; a developer, an approver; a movable clock. */
async function setUp() {
  let ms = Date.parse('2026-12-01T09:00:00.000Z')
  const clock = { advance: (by: number) => (ms += by) }
  const a = await createTestApp({ FLAGD_ENVIRONMENT: 'production' }, { now: () => new Date(ms) })
  apps.push(a)
  const admin = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  expect((await admin('POST', '/api/flags', { name: 'f', type: 'INTEGER', value: 1, minValue: 0, maxValue: 100 })).status).toBe(201)
  expect((await admin('PUT', '/api/environments/staging', {})).status).toBe(201)
  expect((await admin('PUT', '/api/environments/production', { protected: true, requiredApprovals: 1 })).status).toBe(200)
  const dev = await a.userWith(['flag:read', 'flag:write'], 'dev')
  const lead = await a.userWith(['flag:read', 'flag:approve@production'], 'lead')
  const as = (who: { token: string }) => (method: string, path: string, body?: unknown) => a.req(method, path, { token: who.token, body })
  return { a, admin, dev: as(dev), lead: as(lead), clock, ms: () => ms }
}

const request = (set: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  environment: 'production',
  title: 'raise f',
  changes: [{ flag: 'f', set }],
  ...extra,
})

test('made, approved by another, applied: the flag changes in one commit, every step audited', async () => {
  const { a, admin, dev, lead } = await setUp()
  const made = await dev('POST', '/api/change-requests', request({ value: 5 }))
  expect(made.status).toBe(201)
  expect(made.headers.get('location')).toBe(`/api/change-requests/${made.body.id}`)
  expect(made.body).toMatchObject({
    environment: 'production',
    title: 'raise f',
    state: 'open',
    author: { type: 'user', name: 'dev' },
    changes: [{ flag: 'f', set: { value: 5 } }],
    baseRevisions: { f: 1 },
    approvals: [],
    scheduledAt: null,
  })
  const id = made.body.id as string
  expect((await dev('GET', `/api/change-requests/${id}`)).body.changes[0].diff).toEqual({ value: { before: 1, after: 5 } })
  // the author cannot approve; one who may not approve in production neither; nor can anyone apply it unapproved
  expect((await dev('POST', `/api/change-requests/${id}/approve`, {})).status).toBe(403)
  expect((await lead('POST', `/api/change-requests/${id}/apply`)).status).toBe(403)
  expect((await dev('POST', `/api/change-requests/${id}/apply`)).status).toBe(409)
  const approved = await lead('POST', `/api/change-requests/${id}/approve`, { comment: 'looks right' })
  expect(approved.body).toMatchObject({ state: 'approved', approvals: [{ by: { name: 'lead' }, comment: 'looks right' }] })
  expect((await lead('POST', `/api/change-requests/${id}/approve`, {})).status).toBe(409)
  const applied = await lead('POST', `/api/change-requests/${id}/apply`)
  expect(applied.status).toBe(200)
  expect(applied.body).toMatchObject({ state: 'applied', appliedAt: expect.any(String) })
  expect((await admin('GET', '/api/flags/f')).body).toMatchObject({ value: 5, revision: 2 })
  expect((await dev('POST', `/api/change-requests/${id}/apply`)).status).toBe(409)
  const audit = (await admin('GET', '/api/audit?limit=5')).body
  expect(audit.map((e: { action: string }) => e.action).slice(0, 4)).toEqual([
    'change-request.applied',
    'flag.updated',
    'change-request.approved',
    'change-request.created',
  ])
  expect(audit[1]).toMatchObject({ environment: 'production', changeRequest: id, after: { value: 5 } })
  expect(audit[0].target).toMatchObject({ type: 'change-request', id })
  expect(a.app.store.committed().changeRequests.get(id)?.state).toBe('applied')
})

test('bad requests are refused naming the field, and nothing is made', async () => {
  const { dev, admin } = await setUp()
  const outOfRange = await dev('POST', '/api/change-requests', request({ value: 500 }))
  expect(outOfRange.status).toBe(400)
  expect(outOfRange.body.error.details.errors[0].field).toBe('changes[0].set.value')
  const shared = await dev('POST', '/api/change-requests', request({ description: 'x' }))
  expect(shared.body.error.details.errors[0].field).toBe('changes[0].set.description')
  const nowhere = await dev('POST', '/api/change-requests', { ...request({ value: 2 }), environment: 'nowhere' })
  expect(nowhere.status).toBe(400)
  expect(nowhere.body.error.details.field).toBe('environment')
  const missing = await dev('POST', '/api/change-requests', { ...request({ value: 2 }), changes: [{ flag: 'ghost', set: { value: 1 } }] })
  expect(missing.body.error.details.errors[0].field).toBe('changes[0].flag')
  expect((await dev('POST', '/api/change-requests', { ...request({ value: 2 }), title: '' })).status).toBe(400)
  expect((await dev('POST', '/api/change-requests', { ...request({ value: 2 }), scheduledAt: 'tomorrow' })).status).toBe(400)
  // writing in production is what a request needs
  const reader = await admin('POST', '/api/users', { username: 'r', password: 'reader-pass-1', permissions: ['flag:read'] })
  expect(reader.status).toBe(201)
  expect((await admin('GET', '/api/change-requests')).body).toEqual([])
})

test('a flag changed in the environment since the request fails it, with the reason, and nothing is applied', async () => {
  const { admin, dev, lead } = await setUp()
  const id = (await dev('POST', '/api/change-requests', request({ value: 5 }))).body.id
  expect((await lead('POST', `/api/change-requests/${id}/approve`, {})).body.state).toBe('approved')
  // a change confined to staging does not touch it
  expect((await admin('PUT', '/api/flags/f?environment=staging', { value: 9 })).status).toBe(200)
  // the admin holds flag:bypass: a direct change of production
  expect((await admin('PUT', '/api/flags/f', { value: 7 })).status).toBe(200)
  const stale = await lead('POST', `/api/change-requests/${id}/apply`)
  expect(stale.status).toBe(409)
  expect(stale.body.error.details).toMatchObject({ state: 'failed', failureReason: expect.stringContaining('changed in production') })
  expect((await admin('GET', `/api/change-requests/${id}`)).body).toMatchObject({ state: 'failed', failureReason: expect.any(String) })
  expect((await admin('GET', '/api/flags/f')).body.value).toBe(7)
  const [entry] = (await admin('GET', '/api/audit?limit=1')).body
  expect(entry.action).toBe('change-request.failed')
})

test('a staging-only change does not fail a production request', async () => {
  const { admin, dev, lead } = await setUp()
  const id = (await dev('POST', '/api/change-requests', request({ value: 5 }))).body.id
  await lead('POST', `/api/change-requests/${id}/approve`, {})
  expect((await admin('PUT', '/api/flags/f?environment=staging', { value: 9 })).status).toBe(200)
  expect((await dev('POST', `/api/change-requests/${id}/apply`)).body.state).toBe('applied')
  expect((await admin('GET', '/api/flags/f')).body.value).toBe(5)
  expect((await admin('GET', '/api/flags/f?environment=staging')).body.value).toBe(9)
})

test('editing clears approvals; only the author edits or cancels; a rejection needs a comment and not the author', async () => {
  const { dev, lead } = await setUp()
  const id = (await dev('POST', '/api/change-requests', request({ value: 5 }))).body.id
  await lead('POST', `/api/change-requests/${id}/approve`, {})
  expect((await lead('PUT', `/api/change-requests/${id}`, { title: 'mine now', changes: [{ flag: 'f', set: { value: 6 } }] })).status).toBe(
    403,
  )
  const edited = await dev('PUT', `/api/change-requests/${id}`, { title: 'raise f more', changes: [{ flag: 'f', set: { value: 6 } }] })
  expect(edited.body).toMatchObject({ state: 'open', approvals: [], title: 'raise f more', changes: [{ set: { value: 6 } }] })
  expect((await lead('POST', `/api/change-requests/${id}/reject`, {})).status).toBe(400)
  expect((await dev('POST', `/api/change-requests/${id}/reject`, { comment: 'no' })).status).toBe(403)
  expect((await lead('POST', `/api/change-requests/${id}/cancel`)).status).toBe(403)
  const rejected = await lead('POST', `/api/change-requests/${id}/reject`, { comment: 'not before Friday' })
  expect(rejected.body).toMatchObject({ state: 'rejected', rejection: { by: { name: 'lead' }, comment: 'not before Friday' } })
  expect((await dev('POST', `/api/change-requests/${id}/cancel`)).status).toBe(409)
  const other = (await dev('POST', '/api/change-requests', request({ value: 3 }))).body.id
  expect((await dev('POST', `/api/change-requests/${other}/cancel`)).body.state).toBe('cancelled')
})

test('an environment needing no approval approves at once; lists filter by state, environment and flag, newest first', async () => {
  const { dev, clock } = await setUp()
  const staged = await dev('POST', '/api/change-requests', { ...request({ value: 2 }), environment: 'staging' })
  expect(staged.body.state).toBe('approved')
  clock.advance(1000)
  const prod = (await dev('POST', '/api/change-requests', request({ value: 3 }))).body
  const all = (await dev('GET', '/api/change-requests')).body.map((r: { id: string }) => r.id)
  expect(all).toEqual([prod.id, staged.body.id])
  expect((await dev('GET', '/api/change-requests?state=open')).body.map((r: { id: string }) => r.id)).toEqual([prod.id])
  expect((await dev('GET', '/api/change-requests?environment=staging')).body).toHaveLength(1)
  expect((await dev('GET', '/api/change-requests?flag=g')).body).toEqual([])
  expect((await dev('GET', '/api/change-requests?state=done')).status).toBe(400)
  expect((await dev('GET', '/api/change-requests?environment=nowhere')).status).toBe(404)
  expect((await dev('GET', '/api/change-requests/cr_nothing')).status).toBe(404)
})

test('scheduled: approved with a time, applied by the schedule at that time as its author (late ones say how late)', async () => {
  const { a, admin, dev, lead, clock, ms } = await setUp()
  const at = new Date(ms() + 60_000).toISOString()
  const id = (await dev('POST', '/api/change-requests', request({ value: 8 }, { scheduledAt: at }))).body.id
  expect((await lead('POST', `/api/change-requests/${id}/approve`, {})).body).toMatchObject({ state: 'scheduled', scheduledAt: at })
  expect(await a.app.services.changeRequests.applyDue()).toEqual([])
  expect((await admin('GET', '/api/flags/f')).body.value).toBe(1)
  clock.advance(60_000)
  const [done] = await a.app.services.changeRequests.applyDue()
  expect(done?.request.state).toBe('applied')
  expect(done?.lateSeconds).toBeUndefined()
  expect((await admin('GET', '/api/flags/f')).body.value).toBe(8)
  const flagEntry = (await admin('GET', '/api/audit?flag=f&limit=1')).body[0]
  expect(flagEntry).toMatchObject({ source: 'schedule', actor: { name: 'dev' }, changeRequest: id })
  expect(await a.app.services.changeRequests.applyDue()).toEqual([]) // exactly once
  // one whose time passed while nobody applied it: late, and saying so
  const late = (await dev('POST', '/api/change-requests', request({ value: 9 }, { scheduledAt: new Date(ms() + 1000).toISOString() }))).body
    .id
  await lead('POST', `/api/change-requests/${late}/approve`, {})
  clock.advance(3_600_000)
  const [lateOne] = await a.app.services.changeRequests.applyDue()
  expect(lateOne?.lateSeconds).toBe(3599)
  expect((await admin('GET', '/api/audit?flag=f&limit=1')).body[0]).toMatchObject({ changeRequest: late, lateSeconds: expect.any(Number) })
  // a time already past when approved: applied at once
  const past = (await dev('POST', '/api/change-requests', request({ value: 10 }, { scheduledAt: new Date(ms() - 5000).toISOString() })))
    .body.id
  expect((await lead('POST', `/api/change-requests/${past}/approve`, {})).body.state).toBe('applied')
  expect((await admin('GET', '/api/flags/f')).body.value).toBe(10)
})

test('an author cannot approve their own request through an API token they minted with flag:approve (403)', async () => {
  const { a, admin } = await setUp()
  const author = await a.userWith(['flag:read', 'flag:write', 'flag:approve@production', 'token:write'], 'author')
  const as = (method: string, path: string, body?: unknown) => a.req(method, path, { token: author.token, body })
  const id = (await as('POST', '/api/change-requests', request({ value: 5 }))).body.id
  const minted = await as('POST', '/api/tokens', { name: 'my approver', permissions: ['flag:read', 'flag:approve@production'] })
  expect(minted.status).toBe(201)
  const approval = await a.req('POST', `/api/change-requests/${id}/approve`, { headers: { 'x-api-key': minted.body.token }, body: {} })
  expect(approval.status).toBe(403)
  expect((await admin('GET', `/api/change-requests/${id}`)).body).toMatchObject({ state: 'open', approvals: [] })
})

test('an author reduced to flag:read cannot apply their approved request (403, as a direct PUT); a scheduled one then fails, saying why', async () => {
  const { a, admin, dev, lead, clock, ms } = await setUp()
  const id = (await dev('POST', '/api/change-requests', request({ value: 5 }))).body.id
  const later = (await dev('POST', '/api/change-requests', request({ value: 6 }, { scheduledAt: new Date(ms() + 60_000).toISOString() })))
    .body.id
  expect((await lead('POST', `/api/change-requests/${id}/approve`, {})).body.state).toBe('approved')
  expect((await lead('POST', `/api/change-requests/${later}/approve`, {})).body.state).toBe('scheduled')
  const devId = (await admin('GET', '/api/users')).body.find((u: { username: string }) => u.username === 'dev').id
  expect((await admin('PUT', `/api/users/${devId}`, { permissions: ['flag:read'] })).status).toBe(200)
  expect((await dev('PUT', '/api/flags/f', { value: 5 })).status).toBe(403)
  expect((await dev('POST', `/api/change-requests/${id}/apply`)).status).toBe(403)
  expect((await admin('GET', '/api/flags/f')).body.value).toBe(1)
  clock.advance(61_000)
  const [failed] = await a.app.services.changeRequests.applyDue()
  expect(failed?.failureReason).toContain('dev')
  expect((await admin('GET', `/api/change-requests/${later}`)).body).toMatchObject({
    state: 'failed',
    failureReason: failed?.failureReason,
  })
  expect((await admin('GET', '/api/flags/f')).body.value).toBe(1)
})
