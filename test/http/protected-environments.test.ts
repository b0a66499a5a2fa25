/**
 * Protected environments (docs/change-control.md#protected-environments): their flags' state changes
 * only through change requests, from every path (flag writes, promotion, import, rollback), except
 * for holders of `flag:bypass`, whose bypass the audit log shows; shared fields, creating and
 * deleting flags stay open to `flag:write`.
 */

import { afterEach, expect, test } from 'bun:test'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let apps: TestApp[] = []
afterEach(async () => {
  for (const a of apps) await a.close()
  apps = []
})

async function protectedProduction() {
  const a = await createTestApp({ FLAGD_ENVIRONMENT: 'production' })
  apps.push(a)
  const admin = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  expect((await admin('POST', '/api/flags', { name: 'f', type: 'INTEGER', value: 1 })).status).toBe(201)
  expect((await admin('PUT', '/api/environments/staging', {})).status).toBe(201)
  expect((await admin('PUT', '/api/environments/production', { protected: true, requiredApprovals: 1 })).status).toBe(200)
  const dev = await a.userWith(['flag:read', 'flag:write', 'migration:write'])
  const as = (method: string, path: string, body?: unknown) => a.req(method, path, { token: dev.token, body })
  return { a, admin, as }
}

test("a protected environment's state is not changed directly: 409 CHANGE_REQUEST_REQUIRED naming it, nothing changed", async () => {
  const { a, as } = await protectedProduction()
  const refused = await as('PUT', '/api/flags/f', { value: 2 })
  expect(refused.status).toBe(409)
  expect(refused.body.error).toMatchObject({ code: 'CHANGE_REQUEST_REQUIRED', details: { environment: 'production' } })
  expect(refused.body.error.message).toContain('production')
  expect((await as('PUT', '/api/flags/f', { enabled: false })).status).toBe(409)
  // other environments, shared fields, creating and deleting flags stay open
  expect((await as('PUT', '/api/flags/f?environment=staging', { value: 5 })).status).toBe(200)
  expect((await as('PUT', '/api/flags/f', { description: 'shared' })).status).toBe(200)
  expect((await as('POST', '/api/flags', { name: 'g', type: 'BOOLEAN', value: true })).status).toBe(201)
  expect((await as('DELETE', '/api/flags/g')).status).toBe(200)
  // promotion into it: the dry run shows the diff; the promotion is refused
  expect((await as('POST', '/api/environments/production/promote', { from: 'staging', dryRun: true })).body.changes).toHaveLength(1)
  const promotion = await as('POST', '/api/environments/production/promote', { from: 'staging' })
  expect(promotion.status).toBe(409)
  expect(promotion.body.error.code).toBe('CHANGE_REQUEST_REQUIRED')
  // an import that would move its state
  const exported = (await a.req('GET', '/api/migrations/export', { token: a.adminToken })).body
  exported.flags.f.value = 9
  expect((await as('PUT', '/api/migrations', exported)).status).toBe(409)
  // a rollback that would move it back (the admin holds flag:bypass: its change goes through)
  expect((await a.req('PUT', '/api/flags/f', { token: a.adminToken, body: { value: 7 } })).status).toBe(200)
  const [created] = (await a.req('GET', '/api/audit?flag=f', { token: a.adminToken })).body.slice(-1)
  expect((await as('POST', '/api/rollbacks', { name: 'f', revision: created.revision })).status).toBe(409)
  expect((await as('GET', '/api/flags/f')).body).toMatchObject({ value: 7, description: 'shared' })
})

test('a holder of flag:bypass changes it directly, and the audit entry says so', async () => {
  const { a, admin } = await protectedProduction()
  const bypasser = await a.userWith(['flag:read', 'flag:write', 'flag:bypass@production'])
  expect((await a.req('PUT', '/api/flags/f', { token: bypasser.token, body: { value: 2 } })).status).toBe(200)
  const [entry] = (await admin('GET', '/api/audit?flag=f&limit=1')).body
  expect(entry).toMatchObject({ environment: 'production', bypass: true, after: { value: 2 } })
  // a shared change by the same person bypasses nothing
  expect((await a.req('PUT', '/api/flags/f', { token: bypasser.token, body: { description: 'x' } })).status).toBe(200)
  const [shared] = (await admin('GET', '/api/audit?flag=f&limit=1')).body
  expect(shared.bypass).toBeUndefined()
  // bypass for staging does not reach production
  const other = await a.userWith(['flag:read', 'flag:write', 'flag:bypass@staging'])
  expect((await a.req('PUT', '/api/flags/f', { token: other.token, body: { value: 3 } })).status).toBe(409)
})
