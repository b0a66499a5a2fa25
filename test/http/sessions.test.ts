/** docs/api.md#endpoints: listing and ending sessions. */

import { expect, test } from 'bun:test'
import { createTestApp, scenarioGroup, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
const group = scenarioGroup(
  async () => {
    t = await createTestApp()
  },
  () => t.close(),
)

const sidOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()).sid as string

group('GET /api/sessions', () => {
  test('lists active sessions sorted by createdAt, marking the caller', async () => {
    const u = await t.userWith([])
    const res = await t.req('GET', '/api/sessions', { token: t.adminToken })
    expect(res.status).toBe(200)
    const ids = res.body.map((s: { id: string }) => s.id)
    expect(ids).toContain(sidOf(u.token))
    const mine = res.body.find((s: { id: string }) => s.id === sidOf(t.adminToken))
    expect(mine).toMatchObject({ userId: expect.any(String), username: 'admin', current: true })
    expect(Object.keys(mine).sort()).toEqual(['createdAt', 'current', 'expiresAt', 'id', 'lastUsedAt', 'userId', 'username'])
    expect(res.body.filter((s: { current: boolean }) => s.current)).toHaveLength(1)
    const created = res.body.map((s: { createdAt: string }) => s.createdAt)
    expect(created).toEqual([...created].sort())
  })

  test('needs session:read', async () => {
    const u = await t.userWith(['session:write'])
    const res = await t.req('GET', '/api/sessions', { token: u.token })
    expect(res.status).toBe(403)
    expect(res.body.error.details.required).toBe('session:read')
  })

  test('reads never write: lastUsedAt is kept in memory', async () => {
    const before = t.app.store.writes
    for (let i = 0; i < 20; i++) await t.req('GET', '/api/sessions', { token: t.adminToken })
    expect(t.app.store.writes).toBe(before)
  })
})

group('DELETE /api/sessions/{id}', () => {
  test('anyone may end their own session', async () => {
    const u = await t.userWith([])
    const other = await t.login(u.username, u.password)
    const res = await t.req('DELETE', `/api/sessions/${sidOf(other)}`, { token: u.token })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ deleted: true, id: sidOf(other) })
    expect((await t.req('GET', '/api/me', { token: other })).status).toBe(401)
    expect((await t.req('GET', '/api/me', { token: u.token })).status).toBe(200)
  })

  test("another user's session needs session:write", async () => {
    const victim = await t.userWith([])
    const nosy = await t.userWith(['session:read'])
    const denied = await t.req('DELETE', `/api/sessions/${sidOf(victim.token)}`, { token: nosy.token })
    expect(denied.status).toBe(403)
    expect(denied.body.error.details.required).toBe('session:write')
    expect((await t.req('GET', '/api/me', { token: victim.token })).status).toBe(200)
    const ok = await t.req('DELETE', `/api/sessions/${sidOf(victim.token)}`, { token: t.adminToken })
    expect(ok.status).toBe(200)
    expect((await t.req('GET', '/api/me', { token: victim.token })).status).toBe(401)
  })

  test('an unknown session is 404', async () => {
    const res = await t.req('DELETE', '/api/sessions/ses_nope', { token: t.adminToken })
    expect(res.status).toBe(404)
    expect(res.body.error.code).toBe('NOT_FOUND')
  })

  test('deleting the own current session logs out', async () => {
    const u = await t.userWith([])
    expect((await t.req('DELETE', `/api/sessions/${sidOf(u.token)}`, { token: u.token })).status).toBe(200)
    expect((await t.req('GET', '/api/me', { token: u.token })).status).toBe(401)
  })
})
