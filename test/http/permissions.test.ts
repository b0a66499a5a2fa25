/** docs/api.md#permissions: every guarded route needs exactly its permission; open routes need none. */

import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { PERMISSIONS, type Permission } from '../../src/domain/permission.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
let target: string
beforeAll(async () => {
  t = await createTestApp()
  target = (await t.userWith([], 'target')).id
  await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'perm/flag', type: 'BOOLEAN' } })
})
afterAll(() => t.close())

interface Route {
  method: string
  path: () => string
  permission: Permission
  body?: () => unknown
}

const guarded: Route[] = [
  { method: 'GET', path: () => '/api/users', permission: 'user:read' },
  { method: 'GET', path: () => `/api/users/${target}`, permission: 'user:read' },
  {
    method: 'POST',
    path: () => '/api/users',
    permission: 'user:write',
    body: () => ({ username: `n${crypto.randomUUID().slice(0, 8)}`, password: 'password1' }),
  },
  { method: 'PUT', path: () => `/api/users/${target}`, permission: 'user:write', body: () => ({ permissions: [] }) },
  { method: 'GET', path: () => '/api/sessions', permission: 'session:read' },
  { method: 'GET', path: () => '/api/flags', permission: 'flag:read' },
  { method: 'GET', path: () => '/api/flags/perm/flag', permission: 'flag:read' },
  {
    method: 'POST',
    path: () => '/api/flags',
    permission: 'flag:write',
    body: () => ({ name: `perm/n${crypto.randomUUID().slice(0, 8)}`, type: 'BOOLEAN' }),
  },
  { method: 'PUT', path: () => '/api/flags/perm/flag', permission: 'flag:write', body: () => ({ description: crypto.randomUUID() }) },
]

describe.each(guarded)('$method $permission', (route) => {
  test('no token → 401', async () => {
    const res = await t.req(route.method, route.path(), { body: route.body?.() })
    expect(res.status).toBe(401)
  })
  test('every permission but the one needed → 403 naming it', async () => {
    const u = await t.userWith(PERMISSIONS.filter((p) => p !== route.permission))
    const res = await t.req(route.method, route.path(), { token: u.token, body: route.body?.() })
    expect(res.status).toBe(403)
    expect(res.body.error).toMatchObject({ code: 'FORBIDDEN', details: { required: route.permission } })
  })
  test('only the one needed → allowed', async () => {
    const u = await t.userWith([route.permission])
    const res = await t.req(route.method, route.path(), { token: u.token, body: route.body?.() })
    expect(res.status).toBeLessThan(300)
  })
})

describe.each(guarded.filter((r) => r.body !== undefined))('$method $permission, with a body', (route) => {
  test('403 comes before body validation', async () => {
    const u = await t.userWith([])
    const res = await t.req(route.method, route.path(), { token: u.token, body: { bogus: true } })
    expect(res.status).toBe(403)
  })
})

describe('every route of the route table that names a permission', () => {
  // a concrete path for each template: a real user, a real flag
  const concrete = (path: string) =>
    path.replace(':userId', target).replace(':tokenId', 'tok_none').replace(':sessionId', 'ses_none').replace(/\*$/, 'perm/flag')
  test('no token → 401; every permission but the one it names (and what grants it) → 403 naming it', async () => {
    const routes = t.app.http.routes.filter((r) => r.permission !== undefined)
    expect(routes.length).toBeGreaterThan(15) // the table was read
    for (const r of routes) {
      const permission = r.permission as Permission
      // a route sharing its pattern with others (`…/{id}/approve`) is reached through its label
      const path = r.label ? r.label.replace('{flagName}', 'perm/flag').replace(/\{[A-Za-z]+\}/g, 'none') : concrete(r.path)
      const anonymous = await t.req(r.method, path, { body: {} })
      expect(anonymous.status, `${r.method} ${r.path} without a token`).toBe(401)
      const granting = permission === 'flag:evaluate' ? ['flag:evaluate', 'flag:read'] : [permission]
      const u = await t.userWith(PERMISSIONS.filter((p) => !granting.includes(p)))
      const res = await t.req(r.method, path, { token: u.token, body: {} })
      expect(res.status, `${r.method} ${r.path} without ${permission}`).toBe(403)
      expect(res.body.error.details.required, `${r.method} ${r.path}`).toBe(permission)
    }
  })
})

test('DELETE /api/users/{id} needs user:write', async () => {
  const victim = await t.userWith([])
  const without = await t.userWith(PERMISSIONS.filter((p) => p !== 'user:write'))
  expect((await t.req('DELETE', `/api/users/${victim.id}`, { token: without.token })).status).toBe(403)
  const withIt = await t.userWith(['user:write'])
  expect((await t.req('DELETE', `/api/users/${victim.id}`, { token: withIt.token })).status).toBe(200)
})

test('401 comes before body checks (415, 400)', async () => {
  expect((await t.req('POST', '/api/users', { rawBody: 'not json' })).status).toBe(401)
  expect((await t.req('POST', '/api/users', { rawBody: '{', headers: { 'content-type': 'application/json' } })).status).toBe(401)
})

test.each([
  ['GET', '/health'],
  ['GET', '/api/openapi.json'],
  ['GET', '/api/docs'],
])('%s %s needs no token', async (method, path) => {
  expect((await t.req(method, path)).status).toBe(200)
})

test('routes for any logged-in user', async () => {
  const u = await t.userWith([])
  expect((await t.req('GET', '/api/me', { token: u.token })).status).toBe(200)
  expect((await t.req('POST', '/api/logout', { token: u.token })).status).toBe(200)
})
