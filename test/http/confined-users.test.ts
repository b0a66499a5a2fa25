/**
 * Confined people (docs/api.md#confined-users): a user with `flagPrefixes` sees and changes only
 * the flags under them, exactly as a confined API token does; set and cleared through the API.
 */

import { afterEach, expect, test } from 'bun:test'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let apps: TestApp[] = []
afterEach(async () => {
  for (const a of apps) await a.close()
  apps = []
})

async function setUp() {
  const a = await createTestApp({})
  apps.push(a)
  const admin = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  for (const name of ['mobile/a', 'mobile/b', 'web/a'])
    expect((await admin('POST', '/api/flags', { name, type: 'BOOLEAN', value: true })).status).toBe(201)
  const made = await admin('POST', '/api/users', {
    username: 'mia',
    password: 'mia-password-1',
    permissions: ['flag:read', 'flag:write', 'user:write', 'migration:read'],
    flagPrefixes: ['mobile/'],
  })
  expect(made.status).toBe(201)
  expect(made.body).toMatchObject({ username: 'mia', flagPrefixes: ['mobile/'], source: 'local' })
  const login = await a.req('POST', '/api/login', { body: { username: 'mia', password: 'mia-password-1' } })
  const mia = (method: string, path: string, body?: unknown) => a.req(method, path, { token: login.body.token, body })
  return { a, admin, mia, id: made.body.id as string }
}

test('a confined person sees and changes only the flags under their prefixes', async () => {
  const { mia } = await setUp()
  expect((await mia('GET', '/api/flags')).body.map((f: { name: string }) => f.name)).toEqual(['mobile/a', 'mobile/b'])
  expect((await mia('GET', '/api/flags/web/a')).status).toBe(404)
  expect((await mia('PUT', '/api/flags/mobile/a', { value: false })).status).toBe(200)
  expect((await mia('PUT', '/api/flags/web/a', { value: false })).status).toBe(403)
  expect((await mia('PUT', '/api/flags/mobile/b', { name: 'web/b' })).status).toBe(403) // a rename out of one's prefixes
  expect((await mia('POST', '/api/flags', { name: 'web/c', type: 'BOOLEAN' })).status).toBe(403)
  expect((await mia('POST', '/api/flags', { name: 'mobile/c', type: 'BOOLEAN' })).status).toBe(201)
  const bulk = await mia('POST', '/ofrep/v1/evaluate/flags', { context: {} })
  expect(bulk.body.flags.map((f: { key: string }) => f.key).sort()).toEqual(['mobile/a', 'mobile/b', 'mobile/c'])
  expect((await mia('GET', '/api/migrations/export')).status).toBe(403)
  expect((await mia('GET', '/api/me')).body.flagPrefixes).toEqual(['mobile/'])
})

test('a confined person manages no one; prefixes are checked, and [] unconfines', async () => {
  const { admin, mia, id } = await setUp()
  const made = await mia('POST', '/api/users', { username: 'x', password: 'x-password-1', permissions: ['flag:read'] })
  expect(made.status).toBe(403)
  expect(made.body.error.message).toContain('confined')
  const bad = await admin('POST', '/api/users', { username: 'y', password: 'y-password-1', flagPrefixes: ['no spaces'] })
  expect(bad.status).toBe(400)
  expect(bad.body.error.details.field).toContain('flagPrefixes')
  expect((await admin('PUT', `/api/users/${id}`, { flagPrefixes: [] })).body.flagPrefixes).toEqual([])
  expect((await mia('GET', '/api/flags')).body).toHaveLength(3)
  // a confined person may still change their own password
  expect((await admin('PUT', `/api/users/${id}`, { flagPrefixes: ['mobile/'] })).status).toBe(200)
  expect((await mia('PUT', `/api/users/${id}`, { password: 'new-password-22', currentPassword: 'mia-password-1' })).status).toBe(200)
})
