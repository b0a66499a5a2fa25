/**
 * Protected environments (docs/change-control.md#protected-environments): their flags' state changes
 * only through change requests, from every path (flag writes, promotion, import, rollback), except
 * for holders of `flag:bypass`, whose bypass the audit log shows; shared fields that change nothing
 * it serves stay open to `flag:write`, and a flag created meanwhile starts there disabled.
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
  // other environments, shared fields that serve nothing and creating flags stay open; a new flag
  // starts disabled with no value in production, and deleting one is a change request
  expect((await as('PUT', '/api/flags/f?environment=staging', { value: 5 })).status).toBe(200)
  expect((await as('PUT', '/api/flags/f', { description: 'shared' })).status).toBe(200)
  expect((await as('POST', '/api/flags', { name: 'g', type: 'BOOLEAN', value: true })).status).toBe(201)
  expect((await as('GET', '/api/flags/g')).body).toMatchObject({ valueExists: false, enabled: false })
  expect((await as('GET', '/api/flags/g?environment=staging')).body).toMatchObject({ value: true, enabled: true })
  expect((await as('DELETE', '/api/flags/g')).status).toBe(409)
  // promotion into it: the dry run shows the diff and says it would be refused; the promotion is refused
  const dry = await as('POST', '/api/environments/production/promote', { from: 'staging', dryRun: true })
  expect(dry.body.changes).toHaveLength(2)
  expect(dry.body.applyError).toMatchObject({ code: 'CHANGE_REQUEST_REQUIRED', details: { environment: 'production' } })
  const promotion = await as('POST', '/api/environments/production/promote', { from: 'staging' })
  expect(promotion.status).toBe(409)
  expect(promotion.body.error.code).toBe('CHANGE_REQUEST_REQUIRED')
  // an import that would move its state
  const exported = (await a.req('GET', '/api/migrations/export', { token: a.adminToken })).body
  exported.flags.f.value = 9
  const dryImport = await as('PUT', '/api/migrations?dryRun=true', exported)
  expect([dryImport.status, dryImport.body.applyError?.code]).toEqual([200, 'CHANGE_REQUEST_REQUIRED'])
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

test('no way around it: deleting and making the flag again, or changing its type or default value, is refused too', async () => {
  const { a, as } = await protectedProduction()
  const served = async (name: string) => (await as('POST', `/ofrep/v1/evaluate/flags/${name}`, { context: {} })).body
  expect((await as('PUT', '/api/flags/f', { value: 666 })).status).toBe(409)
  // the flag deleted and made again with the value wanted
  const deleted = await as('DELETE', '/api/flags/f')
  expect(deleted.status).toBe(409)
  expect(deleted.body.error).toMatchObject({ code: 'CHANGE_REQUEST_REQUIRED', details: { environment: 'production' } })
  expect((await as('POST', '/api/flags', { name: 'f', type: 'STRING', value: 'EVIL' })).status).toBe(409)
  expect(await served('f')).toMatchObject({ value: 1 })
  // shared fields that change what production serves
  for (const body of [{ type: 'STRING', value: 'EVIL' }, { defaultValue: 666 }]) {
    const refused = await as('PUT', '/api/flags/f', body)
    expect(refused.status).toBe(409)
    expect(refused.body.error.code).toBe('CHANGE_REQUEST_REQUIRED')
  }
  expect((await as('GET', '/api/flags/f')).body).toMatchObject({ type: 'INTEGER', defaultValue: 0, value: 1 })
  // a new flag answers nothing in production: disabled, no value, whatever the body said
  expect((await as('POST', '/api/flags', { name: 'evil', type: 'STRING', value: 'EVIL' })).status).toBe(201)
  expect(await served('evil')).toMatchObject({ reason: 'DISABLED' })
  expect((await served('evil')).value).not.toBe('EVIL')
  // the same changes go through a change request, approved by someone else
  const lead = await a.userWith(['flag:read', 'flag:approve@production'])
  const made = await as('POST', '/api/change-requests', {
    environment: 'production',
    title: 'retire f',
    changes: [{ flag: 'f', delete: true }],
  })
  expect(made.status).toBe(201)
  expect((await a.req('POST', `/api/change-requests/${made.body.id}/approve`, { token: lead.token, body: {} })).status).toBe(200)
  expect((await as('POST', `/api/change-requests/${made.body.id}/apply`)).body.state).toBe('applied')
  expect((await as('GET', '/api/flags/f')).status).toBe(404)
})
