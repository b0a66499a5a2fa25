/**
 * Permissions for one environment (docs/environments.md#permissions): `flag:write@development` lets
 * a developer change development's state and nothing shared; a token of one environment holds only
 * permissions that include it; a reader of some environments sees only those.
 */

import { afterEach, expect, test } from 'bun:test'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let apps: TestApp[] = []
afterEach(async () => {
  for (const a of apps) await a.close()
  apps = []
})

/** production (the default), staging and development, with one integer flag `f` = 1 everywhere. */
async function threeEnvironments(): Promise<
  TestApp & { admin: (method: string, path: string, body?: unknown) => ReturnType<TestApp['req']> }
> {
  const a = await createTestApp({ FLAGD_ENVIRONMENT: 'production' })
  apps.push(a)
  const admin = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  expect((await admin('POST', '/api/flags', { name: 'f', type: 'INTEGER', value: 1 })).status).toBe(201)
  for (const env of ['staging', 'development']) expect((await admin('PUT', `/api/environments/${env}`, {})).status).toBe(201)
  return Object.assign(a, { admin })
}

test('a developer changes development freely, reads production, and is refused anything else (403 naming the permission)', async () => {
  const a = await threeEnvironments()
  const dev = await a.userWith(['flag:read', 'flag:write@development'])
  const as = (method: string, path: string, body?: unknown) => a.req(method, path, { token: dev.token, body })
  expect((await as('PUT', '/api/flags/f?environment=development', { value: 5 })).status).toBe(200)
  const intoProduction = await as('PUT', '/api/flags/f', { value: 9 })
  expect(intoProduction.status).toBe(403)
  // the same value as production has: refused alike (a write in production, whatever it moves)
  expect((await as('PUT', '/api/flags/f', { value: 1 })).status).toBe(403)
  expect(intoProduction.body.error.details).toEqual({ required: 'flag:write@production' })
  expect(intoProduction.body.error.message).toContain('flag:write@production')
  // a shared field changes every environment: the unscoped permission
  const shared = await as('PUT', '/api/flags/f?environment=development', { description: 'mine' })
  expect(shared.status).toBe(403)
  expect(shared.body.error.details).toEqual({ required: 'flag:write' })
  // sending the shared fields unchanged with the state (what a form does) is a state change only
  const whole = (await as('GET', '/api/flags/f?environment=development')).body
  expect((await as('PUT', '/api/flags/f?environment=development', { ...whole, value: 6 })).status).toBe(200)
  expect((await as('POST', '/api/flags', { name: 'g', type: 'BOOLEAN' })).status).toBe(403)
  expect((await as('DELETE', '/api/flags/f')).status).toBe(403)
  expect((await a.admin('GET', '/api/flags/f')).body).toMatchObject({ value: 1, revision: 3 })
  expect((await a.admin('GET', '/api/flags/f?environment=development')).body).toMatchObject({ value: 6, description: '' })
  // promotion into development: allowed; into production: refused, nothing moved
  expect((await as('POST', '/api/environments/development/promote', { from: 'production' })).status).toBe(200)
  expect((await as('POST', '/api/environments/production/promote', { from: 'development' })).status).toBe(403)
  expect((await a.admin('GET', '/api/flags/f')).body.value).toBe(1)
})

test('a reader of staging alone reads staging, sees only staging among the states, and gets 403 for the rest', async () => {
  const a = await threeEnvironments()
  const qa = await a.userWith(['flag:read@staging'])
  const as = (method: string, path: string) => a.req(method, path, { token: qa.token })
  expect((await as('GET', '/api/flags')).status).toBe(403)
  expect((await as('GET', '/api/flags/f')).status).toBe(403)
  expect((await as('GET', '/api/flags?environment=staging')).status).toBe(200)
  expect((await as('GET', '/api/flags/f?environment=staging')).body.value).toBe(1)
  expect(Object.keys((await as('GET', '/api/flags/f/environments')).body)).toEqual(['staging'])
  expect((await as('GET', '/api/environments')).status).toBe(200)
  expect((await as('GET', '/api/environments/compare?from=staging&to=production')).status).toBe(403)
  // flag:read@staging grants flag:evaluate@staging, and nothing in production
  expect((await a.req('POST', '/ofrep/v1/evaluate/flags/f?environment=staging', { token: qa.token, body: { context: {} } })).status).toBe(
    200,
  )
  expect((await a.req('POST', '/ofrep/v1/evaluate/flags/f', { token: qa.token, body: { context: {} } })).status).toBe(403)
})

test('a permission names an existing environment, only for flag permissions; stored in canonical order', async () => {
  const a = await threeEnvironments()
  const make = (permissions: string[]) =>
    a.admin('POST', '/api/users', { username: `u${Math.random()}`, password: 'long-enough-1', permissions })
  const nowhere = await make(['flag:write@nowhere'])
  expect(nowhere.status).toBe(400)
  expect(nowhere.body.error.details.field).toBe('permissions')
  expect((await make(['user:read@staging'])).status).toBe(400)
  expect((await make(['flag:fly@staging'])).status).toBe(400)
  const made = await make(['flag:write@staging', 'flag:read', 'flag:evaluate@development', 'flag:write@development'])
  expect(made.status).toBe(201)
  expect(made.body.permissions).toEqual(['flag:read', 'flag:write@development', 'flag:write@staging', 'flag:evaluate@development'])
  expect((await a.admin('GET', '/api/users')).body.length).toBe(2)
})

test('a token of one environment holds only permissions that include it, and evaluates with them', async () => {
  const a = await threeEnvironments()
  const token = (body: Record<string, unknown>) => a.admin('POST', '/api/tokens', { name: `t${Math.random()}`, ...body })
  const other = await token({ environment: 'staging', permissions: ['flag:evaluate@production'] })
  expect(other.status).toBe(400)
  expect(other.body.error.details.field).toBe('permissions')
  // a token of no environment evaluates the default one: a permission for another is refused too
  expect((await token({ permissions: ['flag:evaluate@staging'] })).status).toBe(400)
  const staging = await token({ environment: 'staging', permissions: ['flag:evaluate@staging'] })
  expect(staging.status).toBe(201)
  expect(staging.body.permissions).toEqual(['flag:evaluate@staging'])
  expect((await a.admin('PUT', '/api/flags/f?environment=staging', { value: 2 })).status).toBe(200)
  const answer = await a.req('POST', '/ofrep/v1/evaluate/flags/f', { token: staging.body.token, body: { context: {} } })
  expect(answer.status).toBe(200)
  expect(answer.body.value).toBe(2)
  expect((await a.req('POST', '/ofrep/v1/evaluate/flags', { token: staging.body.token, body: { context: {} } })).status).toBe(200)
  // a token holds no more than its maker: one who may write only development makes no production token
  const dev = await a.userWith(['token:write', 'flag:write@development'])
  const made = await a.req('POST', '/api/tokens', {
    token: dev.token,
    body: { name: 'ci', environment: 'production', permissions: ['flag:write@production'] },
  })
  expect(made.status).toBe(403)
  expect(made.body.error.details.required).toBe('flag:write@production')
})

test('an environment still named by a permission or a token cannot be removed, naming who holds it', async () => {
  const a = await threeEnvironments()
  await a.userWith(['flag:write@development'], 'dana')
  const refused = await a.admin('DELETE', '/api/environments/development')
  expect(refused.status).toBe(409)
  expect(refused.body.error.message).toContain('user dana')
  expect((await a.admin('GET', '/api/environments')).body.map((e: { name: string }) => e.name)).toContain('development')
  expect((await a.admin('POST', '/api/tokens', { name: 'stage', environment: 'staging', permissions: ['flag:evaluate'] })).status).toBe(201)
  expect((await a.admin('DELETE', '/api/environments/staging')).body.error.message).toContain('token stage')
})

test('audit entries name the environment whose state moved (null for shared fields); ?environment= filters, 404 unknown', async () => {
  const a = await threeEnvironments()
  expect((await a.admin('PUT', '/api/flags/f?environment=staging', { value: 2 })).status).toBe(200)
  expect((await a.admin('PUT', '/api/flags/f', { value: 3 })).status).toBe(200)
  expect((await a.admin('PUT', '/api/flags/f', { description: 'shared' })).status).toBe(200)
  const all = (await a.admin('GET', '/api/audit?flag=f')).body
  expect(all.map((e: { environment: unknown }) => e.environment)).toEqual([null, 'production', 'staging', null])
  const staging = (await a.admin('GET', '/api/audit?environment=staging')).body
  expect(staging.length).toBe(1)
  expect(staging[0]).toMatchObject({ environment: 'staging', after: { value: 2 } })
  expect((await a.admin('GET', '/api/audit?environment=nowhere')).status).toBe(404)
  // a reader of production alone sees the flag's history without staging's entries
  const reader = await a.userWith(['flag:read@production'])
  const seen = (await a.req('GET', '/api/audit?flag=f', { token: reader.token })).body
  expect(seen.map((e: { environment: unknown }) => e.environment)).toEqual([null, 'production', null])
})

test('usage is counted per environment; stale only when unused in every one', async () => {
  const a = await threeEnvironments()
  const staging = await a.admin('POST', '/api/tokens', { name: 'stage', environment: 'staging', permissions: ['flag:evaluate'] })
  for (let i = 0; i < 3; i++)
    expect((await a.req('POST', '/ofrep/v1/evaluate/flags/f', { token: staging.body.token, body: { context: {} } })).status).toBe(200)
  expect((await a.req('POST', '/ofrep/v1/evaluate/flags/f', { token: a.adminToken, body: { context: {} } })).status).toBe(200)
  expect((await a.admin('GET', '/api/flags/f/usage?environment=staging')).body.total).toBe(3)
  expect((await a.admin('GET', '/api/flags/f/usage')).body.total).toBe(1)
  expect((await a.admin('GET', '/api/flags/f/usage?environment=development')).body.total).toBe(0)
  const listed = (await a.admin('GET', '/api/usage?environment=development')).body
  expect(listed).toMatchObject([{ name: 'f', total: 0 }])
  expect((await a.admin('GET', '/api/usage?environment=nowhere')).status).toBe(404)
  // written and read back from the usage log, still per environment
  await a.app.services.usage.flush()
  expect((await a.admin('GET', '/api/flags/f/usage?environment=staging')).body.total).toBe(3)
  expect((await a.admin('GET', '/api/usage')).body[0].total).toBe(1)
})

test("an import with ?environment= sets that environment's state and the shared fields; 404 unknown, nothing changed", async () => {
  const a = await threeEnvironments()
  const file = (await a.admin('GET', '/api/migrations/export')).body
  file.flags.f.value = 7
  file.flags.f.description = 'from the file'
  file.flags.n = { type: 'STRING', valueExists: true, value: 'new', defaultValue: null, description: '' }
  const put = await a.req('PUT', '/api/migrations?environment=staging', { token: a.adminToken, body: file })
  expect(put.status).toBe(200)
  expect((await a.admin('GET', '/api/flags/f?environment=staging')).body).toMatchObject({ value: 7, description: 'from the file' })
  expect((await a.admin('GET', '/api/flags/f')).body).toMatchObject({ value: 1, description: 'from the file' })
  expect((await a.admin('GET', '/api/flags/n?environment=staging')).body.value).toBe('new')
  expect((await a.admin('GET', '/api/flags/n')).body.valueExists).toBe(false)
  const [entry] = (await a.admin('GET', '/api/audit?flag=f&limit=1')).body
  expect(entry.environment).toBe('staging')
  const before = a.app.store.committed().revisionOf('flags')
  expect((await a.req('PUT', '/api/migrations?environment=nowhere', { token: a.adminToken, body: file })).status).toBe(404)
  expect(a.app.store.committed().revisionOf('flags')).toBe(before)
})

test('a segment used by one environment only: listed there, kept from deletion, and its change moves the flag', async () => {
  const a = await threeEnvironments()
  expect((await a.admin('PUT', '/api/segments/pro', { rule: { '==': [{ var: 'plan' }, 'pro'] } })).status).toBe(201)
  const flag = await a.admin('PUT', '/api/flags/f?environment=staging', {
    variants: { one: 1, two: 2 },
    targeting: { if: [{ $ref: 'pro' }, 'two', 'one'] },
  })
  expect(flag.status).toBe(200)
  expect((await a.admin('GET', '/api/segments/pro')).body.usedBy).toEqual([])
  expect((await a.admin('GET', '/api/segments/pro?environment=staging')).body.usedBy).toEqual(['f'])
  expect((await a.admin('GET', '/api/segments/pro?environment=nowhere')).status).toBe(404)
  const refused = await a.admin('DELETE', '/api/segments/pro')
  expect(refused.status).toBe(409)
  const revision = (await a.admin('GET', '/api/flags/f')).body.revision
  expect((await a.admin('PUT', '/api/segments/pro', { rule: { '==': [{ var: 'plan' }, 'gold'] } })).status).toBe(200)
  expect((await a.admin('GET', '/api/flags/f')).body.revision).toBe(revision + 1)
})

test('evaluate-with-trace takes ?environment= (404 unknown; 403 for an environment one may not read)', async () => {
  const a = await threeEnvironments()
  expect((await a.admin('PUT', '/api/flags/f?environment=staging', { value: 2 })).status).toBe(200)
  const traced = await a.admin('POST', '/api/flags/f/evaluate?environment=staging', { context: {} })
  expect(traced.status).toBe(200)
  expect(traced.body.value).toBe(2)
  expect((await a.admin('POST', '/api/flags/f/evaluate', { context: {} })).body.value).toBe(1)
  expect((await a.admin('POST', '/api/flags/f/evaluate?environment=nowhere', { context: {} })).status).toBe(404)
  const qa = await a.userWith(['flag:read@staging'])
  expect((await a.req('POST', '/api/flags/f/evaluate', { token: qa.token, body: { context: {} } })).status).toBe(403)
})
