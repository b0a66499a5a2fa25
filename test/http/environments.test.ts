/**
 * Environments as a resource (docs/environments.md): listed, created with every flag's state
 * copied, changed, removed; the default one (config environment) made at start and kept; no flag's
 * revision, audit entry or event moves when an environment comes or goes.
 */

import { afterEach, expect, test } from 'bun:test'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let apps: TestApp[] = []
afterEach(async () => {
  for (const a of apps) await a.close()
  apps = []
})

async function app(env: Record<string, string> = {}): Promise<TestApp> {
  const a = await createTestApp({ FLAGD_ENVIRONMENT: 'development', ...env })
  apps.push(a)
  return a
}

const names = (res: { body: { name: string }[] }) => res.body.map((e) => e.name)

test('the default environment exists from the start, and is listed to anyone who may read flags', async () => {
  const a = await app()
  const listed = await a.req('GET', '/api/environments', { token: a.adminToken })
  expect(listed.status).toBe(200)
  expect(listed.body).toEqual([
    {
      name: 'development',
      description: '',
      protected: false,
      requiredApprovals: 0,
      color: '#6b7280',
      default: true,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    },
  ])
  const reader = await a.userWith(['flag:read'])
  expect((await a.req('GET', '/api/environments', { token: reader.token })).status).toBe(200)
  const nobody = await a.userWith(['user:read'])
  expect((await a.req('GET', '/api/environments', { token: nobody.token })).status).toBe(403)
})

test('a new environment starts with every flag as the default serves it; no revision, audit entry or flag event moves', async () => {
  const a = await app()
  const flag = { name: 'app/on', type: 'BOOLEAN', value: true, targeting: { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'true', 'false'] } }
  expect((await a.req('POST', '/api/flags', { token: a.adminToken, body: flag })).status).toBe(201)
  const auditBefore = (await a.req('GET', '/api/audit?limit=100', { token: a.adminToken })).body.length
  const made = await a.req('PUT', '/api/environments/staging', { token: a.adminToken, body: { description: 'before production' } })
  expect(made.status).toBe(201)
  expect(made.headers.get('location')).toBe('/api/environments/staging')
  expect(made.body).toMatchObject({ name: 'staging', description: 'before production', default: false, protected: false })
  const row = a.app.store.committed().flags.get('app/on')
  expect(row?.revision).toBe(1)
  // every environment's state stored alike: the new one's a copy of the default's
  const state = { valueExists: true, value: true, enabled: true, targeting: flag.targeting }
  expect(row?.states).toEqual({ development: state, staging: state })
  expect((await a.req('GET', '/api/flags/app/on', { token: a.adminToken })).body.revision).toBe(1)
  const audit = (await a.req('GET', '/api/audit?limit=100', { token: a.adminToken })).body
  expect(audit.length).toBe(auditBefore + 1)
  expect(audit[0]).toMatchObject({ action: 'environment.created', target: { type: 'environment', name: 'staging' } })
  expect(names(await a.req('GET', '/api/environments', { token: a.adminToken }))).toEqual(['development', 'staging'])
})

test('changing one: its fields only; copyFrom on create only; every mistake named and nothing changed', async () => {
  const a = await app()
  const put = (name: string, body: unknown) => a.req('PUT', `/api/environments/${name}`, { token: a.adminToken, body })
  expect((await put('production', { protected: true, requiredApprovals: 2 })).status).toBe(201)
  const changed = await put('production', { description: 'live' })
  expect(changed.status).toBe(200)
  expect(changed.body).toMatchObject({ description: 'live', protected: true, requiredApprovals: 2 })
  const refusals: [string, unknown, string][] = [
    ['production', { copyFrom: 'development' }, 'copyFrom'],
    ['qa', { copyFrom: 'nowhere' }, 'copyFrom'],
    ['qa', { surprise: 1 }, 'surprise'],
    ['qa', { requiredApprovals: -1 }, 'requiredApprovals'],
    ['qa', { protected: 'yes' }, 'protected'],
    ['not%20valid', {}, 'name'],
  ]
  for (const [name, body, field] of refusals) {
    const res = await put(name, body)
    expect({ name, status: res.status, field: res.body.error.details.field }).toEqual({ name, status: 400, field })
  }
  expect(names(await a.req('GET', '/api/environments', { token: a.adminToken }))).toEqual(['development', 'production'])
})

test('at most 20 environments', async () => {
  const a = await app()
  for (let i = 1; i < 20; i++) expect((await a.req('PUT', `/api/environments/e${i}`, { token: a.adminToken, body: {} })).status).toBe(201)
  const refused = await a.req('PUT', '/api/environments/e20', { token: a.adminToken, body: {} })
  expect(refused.status).toBe(400)
  expect(refused.body.error.message).toContain('at most 20')
})

test('removing one drops its states; the default cannot be removed; writing needs environment:write', async () => {
  const a = await app()
  expect((await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'f', type: 'INTEGER', value: 3 } })).status).toBe(201)
  expect((await a.req('PUT', '/api/environments/staging', { token: a.adminToken, body: {} })).status).toBe(201)
  const writer = await a.userWith(['flag:read', 'flag:write'])
  expect((await a.req('DELETE', '/api/environments/staging', { token: writer.token })).status).toBe(403)
  expect((await a.req('PUT', '/api/environments/qa', { token: writer.token, body: {} })).status).toBe(403)
  expect((await a.req('DELETE', '/api/environments/development', { token: a.adminToken })).status).toBe(409)
  expect((await a.req('DELETE', '/api/environments/nowhere', { token: a.adminToken })).status).toBe(404)
  const removed = await a.req('DELETE', '/api/environments/staging', { token: a.adminToken })
  expect(removed.status).toBe(200)
  expect(removed.body).toEqual({ deleted: true, name: 'staging' })
  const row = a.app.store.committed().flags.get('f')
  expect(Object.keys(row?.states ?? {})).toEqual(['development'])
  expect(row?.revision).toBe(1)
})

test('environments survive a restart; a default named anew starts as the old one, which may then go', async () => {
  const first = await createTestApp({ FLAGD_ENVIRONMENT: 'dev' })
  expect((await first.req('POST', '/api/flags', { token: first.adminToken, body: { name: 'f', type: 'INTEGER', value: 7 } })).status).toBe(
    201,
  )
  const second = await first.restart({ FLAGD_ENVIRONMENT: 'prod' })
  apps.push(second)
  const listed = (await second.req('GET', '/api/environments', { token: second.adminToken })).body
  expect(listed.map((e: { name: string; default: boolean }) => [e.name, e.default])).toEqual([
    ['dev', false],
    ['prod', true],
  ])
  expect((await second.req('DELETE', '/api/environments/dev', { token: second.adminToken })).status).toBe(200)
  const s = second.app.store.committed()
  expect([...s.environments.keys()]).toEqual(['prod'])
  // every environment's state is stored alike: the new default's is a copy, the old one's went with it
  expect(s.flags.get('f')).toMatchObject({ states: { prod: { value: 7, valueExists: true } }, revision: 1 })
  expect(Object.keys(s.flags.get('f')?.states ?? {})).toEqual(['prod'])
  expect((await second.req('GET', '/api/flags/f', { token: second.adminToken })).body).toMatchObject({ value: 7, revision: 1 })
})

test("a change in one environment is that environment's; shared fields change every one, checked against each", async () => {
  const a = await app()
  const put = (path: string, body: unknown) => a.req('PUT', path, { token: a.adminToken, body })
  const get = async (path: string) => (await a.req('GET', path, { token: a.adminToken })).body
  expect((await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'limit', type: 'INTEGER', value: 5 } })).status).toBe(201)
  expect((await put('/api/environments/staging', {})).status).toBe(201)
  // staging's own value: development keeps its own
  const staged = await put('/api/flags/limit?environment=staging', { value: 9 })
  expect(staged.status).toBe(200)
  expect(staged.body).toMatchObject({ value: 9, revision: 2 })
  expect(await get('/api/flags/limit')).toMatchObject({ value: 5, revision: 2 })
  expect(await get('/api/flags/limit?environment=staging')).toMatchObject({ value: 9, revision: 2 })
  // development changes: staging keeps its value
  expect((await put('/api/flags/limit', { value: 6 })).status).toBe(200)
  expect(await get('/api/flags/limit?environment=staging')).toMatchObject({ value: 9, revision: 3 })
  // a shared field is every environment's, and must hold for each
  const refused = await put('/api/flags/limit', { maxValue: 8 })
  expect(refused.status).toBe(400)
  expect(refused.body.error.details.errors).toContainEqual({ field: 'environments.staging.value', reason: '9 is above maxValue 8' })
  expect((await put('/api/flags/limit?environment=staging', { description: 'shared', maxValue: 10 })).status).toBe(200)
  expect(await get('/api/flags/limit')).toMatchObject({ value: 6, description: 'shared', maxValue: 10 })
  // a new flag starts with the same state everywhere; unknown environments are 404
  expect((await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'fresh', type: 'BOOLEAN', value: true } })).status).toBe(
    201,
  )
  expect(await get('/api/flags/fresh?environment=staging')).toMatchObject({ value: true })
  expect((await a.req('GET', '/api/flags/limit?environment=nowhere', { token: a.adminToken })).status).toBe(404)
  expect((await put('/api/flags/limit?environment=nowhere', { value: 1 })).status).toBe(404)
  const listed = (await get('/api/flags?environment=staging')) as { name: string; value: unknown }[]
  expect(listed.map((f) => [f.name, f.value])).toEqual([
    ['fresh', true],
    ['limit', 9],
  ])
})

test("an API token evaluates its environment's state over OFREP, one flag or all; its environment must exist", async () => {
  const a = await app()
  expect(
    (await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'shop/banner', type: 'STRING', value: 'dev' } })).status,
  ).toBe(201)
  expect((await a.req('PUT', '/api/environments/staging', { token: a.adminToken, body: {} })).status).toBe(201)
  expect(
    (await a.req('PUT', '/api/flags/shop/banner?environment=staging', { token: a.adminToken, body: { value: 'staged' } })).status,
  ).toBe(200)
  const token = async (environment?: string | null) => {
    const made = await a.req('POST', '/api/tokens', {
      token: a.adminToken,
      body: { name: `app-${environment}`, permissions: ['flag:evaluate'], ...(environment === undefined ? {} : { environment }) },
    })
    expect(made.status).toBe(201)
    expect(made.body.environment).toBe(environment ?? null)
    return made.body.token as string
  }
  const staging = await token('staging')
  const plain = await token()
  const one = async (key: string) =>
    (await a.req('POST', '/ofrep/v1/evaluate/flags/shop/banner', { headers: { 'x-api-key': key }, body: { context: {} } })).body.value
  expect(await one(staging)).toBe('staged')
  expect(await one(plain)).toBe('dev')
  const all = async (key: string) =>
    (await a.req('POST', '/ofrep/v1/evaluate/flags', { headers: { 'x-api-key': key }, body: { context: {} } })).body
  const [stagedAll, plainAll] = [await all(staging), await all(plain)]
  expect(stagedAll.flags).toEqual([expect.objectContaining({ key: 'shop/banner', value: 'staged' })])
  expect(plainAll.flags).toEqual([expect.objectContaining({ key: 'shop/banner', value: 'dev' })])
  const refused = await a.req('POST', '/api/tokens', {
    token: a.adminToken,
    body: { name: 'lost', permissions: ['flag:evaluate'], environment: 'nowhere' },
  })
  expect(refused.status).toBe(400)
  expect(refused.body.error.details.field).toBe('environment')
})

test('compare shows what differs; promote copies it in one commit, after a dry run that changes nothing', async () => {
  const a = await app()
  const req = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  for (const [name, value] of [
    ['app/a', 1],
    ['app/b', 2],
    ['ops/c', 3],
  ] as const)
    expect((await req('POST', '/api/flags', { name, type: 'INTEGER', value })).status).toBe(201)
  expect((await req('PUT', '/api/environments/staging', {})).status).toBe(201)
  expect((await req('PUT', '/api/environments/production', {})).status).toBe(201)
  expect((await req('PUT', '/api/flags/app/a?environment=staging', { value: 10 })).status).toBe(200)
  expect((await req('PUT', '/api/flags/ops/c?environment=staging', { enabled: false })).status).toBe(200)

  const compared = await req('GET', '/api/environments/compare?from=staging&to=production')
  expect(compared.status).toBe(200)
  expect(compared.body).toEqual([
    { name: 'app/a', fields: { value: { from: 10, to: 1 } }, revisions: { from: 2, to: 1 } },
    { name: 'ops/c', fields: { enabled: { from: false, to: true } }, revisions: { from: 2, to: 1 } },
  ])
  expect((await req('GET', '/api/environments/compare?from=staging&to=production&prefix=app/')).body).toHaveLength(1)
  expect((await req('GET', '/api/environments/compare?from=staging&to=nowhere')).status).toBe(404)

  const dry = await req('POST', '/api/environments/production/promote', { from: 'staging', prefix: 'app/', dryRun: true })
  expect(dry.status).toBe(200)
  expect(dry.body).toEqual({
    dryRun: true,
    changes: [{ name: 'app/a', revision: 3, diff: { value: { before: 1, after: 10 } } }],
    unchanged: 1,
  })
  expect((await req('GET', '/api/flags/app/a?environment=production')).body).toMatchObject({ value: 1, revision: 2 })

  const done = await req('POST', '/api/environments/production/promote', { from: 'staging' })
  expect(done.body.changes.map((c: { name: string }) => c.name)).toEqual(['app/a', 'ops/c'])
  expect(done.body.unchanged).toBe(1)
  expect((await req('GET', '/api/flags/app/a?environment=production')).body).toMatchObject({ value: 10, revision: 3 })
  expect((await req('GET', '/api/flags/ops/c?environment=production')).body).toMatchObject({ enabled: false })
  expect((await req('GET', '/api/flags/app/a')).body).toMatchObject({ value: 1 }) // development untouched
  const [promoted] = (await req('GET', '/api/audit?flag=app/a&limit=1')).body
  expect(promoted).toMatchObject({ environment: 'production', before: { value: 1 }, after: { value: 10 } })
  expect((await req('GET', '/api/environments/compare?from=staging&to=production')).body).toEqual([])

  // mistakes: named, nothing changed
  expect((await req('POST', '/api/environments/production/promote', { from: 'nowhere' })).body.error.details.field).toBe('from')
  expect((await req('POST', '/api/environments/production/promote', { from: 'staging', flags: ['no/such'] })).status).toBe(400)
  expect((await req('POST', '/api/environments/nowhere/promote', { from: 'staging' })).status).toBe(404)
  expect((await req('POST', '/api/environments/production/elsewhere', { from: 'staging' })).status).toBe(404)
})

test("a change in one environment is audited as that environment's, and rolled back there", async () => {
  const a = await app()
  const req = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  expect((await req('POST', '/api/flags', { name: 'f', type: 'INTEGER', value: 1 })).status).toBe(201)
  expect((await req('PUT', '/api/environments/staging', {})).status).toBe(201)
  expect((await req('PUT', '/api/flags/f?environment=staging', { value: 2 })).status).toBe(200) // revision 2
  expect((await req('PUT', '/api/flags/f?environment=staging', { value: 3 })).status).toBe(200) // revision 3
  const [entry] = (await req('GET', '/api/audit?flag=f&limit=1')).body
  expect(entry).toMatchObject({ action: 'flag.updated', environment: 'staging', revision: 3, before: { value: 2 }, after: { value: 3 } })
  const rolled = await req('POST', '/api/rollbacks', { name: 'f', revision: 2 })
  expect(rolled.status).toBe(200)
  expect((await req('GET', '/api/flags/f?environment=staging')).body).toMatchObject({ value: 2, revision: 4 })
  expect((await req('GET', '/api/flags/f')).body).toMatchObject({ value: 1, revision: 4 })
})

test('a flag created in one environment has its state there; every other starts with the type defaults', async () => {
  const a = await app()
  const req = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  expect((await req('PUT', '/api/environments/staging', {})).status).toBe(201)
  const made = await req('POST', '/api/flags?environment=staging', { name: 'beta', type: 'STRING', value: 'on trial' })
  expect(made.status).toBe(201)
  expect(made.body).toMatchObject({ name: 'beta', value: 'on trial', valueExists: true, revision: 1 })
  expect((await req('GET', '/api/flags/beta')).body).toMatchObject({ valueExists: false, enabled: true })
  expect((await req('GET', '/api/flags/beta')).body.value).toBeUndefined()
  expect((await req('POST', '/api/flags?environment=nowhere', { name: 'lost', type: 'BOOLEAN' })).status).toBe(404)
  expect((await req('GET', '/api/flags/lost')).status).toBe(404)
})

test("an export names its environment and carries that environment's states, in both formats", async () => {
  const a = await app()
  const req = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  expect((await req('POST', '/api/flags', { name: 'f', type: 'INTEGER', value: 1 })).status).toBe(201)
  expect((await req('PUT', '/api/environments/staging', {})).status).toBe(201)
  expect((await req('PUT', '/api/flags/f?environment=staging', { value: 2 })).status).toBe(200)
  const staged = await req('GET', '/api/migrations/export?environment=staging')
  expect(staged.status).toBe(200)
  expect(staged.headers.get('content-disposition')).toContain('staging')
  expect(staged.body).toMatchObject({ environment: 'staging', flags: { f: { value: 2 } } })
  expect((await req('GET', '/api/migrations/export')).body).toMatchObject({ environment: 'development', flags: { f: { value: 1 } } })
  const flagd = await req('GET', '/api/migrations/export?format=flagd&environment=staging')
  expect(flagd.body.flags.f.defaultVariant).toBeDefined()
  expect(flagd.body.flags.f.variants[flagd.body.flags.f.defaultVariant]).toBe(2)
  expect((await req('GET', '/api/migrations/export?environment=nowhere')).status).toBe(404)
  expect((await a.req('GET', '/migration/export?environment=staging')).body).toMatchObject({ environment: 'staging' })
})

test("an OFREP stream of one environment hears that environment's changes and shared ones, not another's", async () => {
  const a = await app()
  const req = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  expect((await req('POST', '/api/flags', { name: 'f', type: 'INTEGER', value: 1 })).status).toBe(201)
  expect((await req('PUT', '/api/environments/staging', {})).status).toBe(201)
  const token = (await req('POST', '/api/tokens', { name: 'staging-app', permissions: ['flag:evaluate'], environment: 'staging' })).body
    .token as string
  const res = await a.app.http.handle(new Request('http://localhost/ofrep/v1/events', { headers: { 'x-api-key': token } }))
  expect(res.status).toBe(200)
  const reader = res.body?.getReader() as ReadableStreamDefaultReader<Uint8Array>
  let text = ''
  const events = () => [...text.matchAll(/"etag":"(\d+)"/g)].map((m) => Number(m[1]))
  /** Reads the stream until `n` events have come: each read waits for the next chunk the daemon sends. */
  const until = async (n: number) => {
    while (events().length < n) {
      const { value, done } = await reader.read()
      if (done) throw new Error(`the stream ended after ${events().length} events`)
      text += new TextDecoder().decode(value)
    }
  }
  try {
    const flagsRevision = () => a.app.store.committed().revisionOf('flags')
    expect((await req('PUT', '/api/flags/f', { value: 5 })).status).toBe(200) // development only
    const development = flagsRevision()
    expect((await req('PUT', '/api/flags/f?environment=staging', { value: 6 })).status).toBe(200)
    const staging = flagsRevision()
    expect((await req('PUT', '/api/flags/f?environment=staging', { description: 'every environment' })).status).toBe(200)
    const shared = flagsRevision()
    await until(2)
    // events keep commit order: had the development change been one, it would come first
    expect(events()).toEqual([staging, shared])
    expect(events()).not.toContain(development)
  } finally {
    await reader.cancel().catch(() => {})
  }
})

test("a flag's state in every environment; a flag named …/environments is still read as itself", async () => {
  const a = await app()
  const req = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  expect((await req('POST', '/api/flags', { name: 'app/f', type: 'INTEGER', value: 1 })).status).toBe(201)
  expect((await req('PUT', '/api/environments/staging', {})).status).toBe(201)
  expect((await req('PUT', '/api/flags/app/f?environment=staging', { value: 2, enabled: false })).status).toBe(200)
  const states = await req('GET', '/api/flags/app/f/environments')
  expect(states.status).toBe(200)
  expect(states.body).toEqual({
    development: { valueExists: true, value: 1, enabled: true },
    staging: { valueExists: true, value: 2, enabled: false },
  })
  expect((await req('GET', '/api/flags/nope/environments')).status).toBe(404)
  expect((await req('GET', '/api/flags/app%E0%A4%A/environments')).status).toBe(400)
  expect((await req('POST', '/api/flags', { name: 'odd/environments', type: 'BOOLEAN' })).status).toBe(201)
  expect((await req('GET', '/api/flags/odd/environments')).body).toMatchObject({ name: 'odd/environments', type: 'BOOLEAN' })
})

test('a session evaluates the default environment over OFREP, or the one ?environment= names', async () => {
  const a = await app()
  const req = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  expect((await req('POST', '/api/flags', { name: 'f', type: 'INTEGER', value: 1 })).status).toBe(201)
  expect((await req('PUT', '/api/environments/staging', {})).status).toBe(201)
  expect((await req('PUT', '/api/flags/f?environment=staging', { value: 2 })).status).toBe(200)
  expect((await req('POST', '/ofrep/v1/evaluate/flags/f', { context: {} })).body.value).toBe(1)
  expect((await req('POST', '/ofrep/v1/evaluate/flags/f?environment=staging', { context: {} })).body.value).toBe(2)
  const bulk = await req('POST', '/ofrep/v1/evaluate/flags?environment=staging', { context: {} })
  expect(bulk.body.flags).toEqual([expect.objectContaining({ key: 'f', value: 2 })])
  const unknown = await req('POST', '/ofrep/v1/evaluate/flags/f?environment=nowhere', { context: {} })
  expect(unknown.status).toBe(404)
  expect(unknown.body.error.code).toBe('NOT_FOUND')
  // other query parameters are ignored, as OFREP says
  expect((await req('POST', '/ofrep/v1/evaluate/flags/f?x=1', { context: {} })).body.value).toBe(1)
})

test("an in-process provider with a token of one environment is sent that environment's states", async () => {
  const a = await app()
  const req = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  expect((await req('POST', '/api/flags', { name: 'f', type: 'INTEGER', value: 1 })).status).toBe(201)
  expect((await req('PUT', '/api/environments/staging', {})).status).toBe(201)
  expect((await req('PUT', '/api/flags/f?environment=staging', { value: 2 })).status).toBe(200)
  const made = (await req('POST', '/api/tokens', { name: 'sync', permissions: ['flag:evaluate'], environment: 'staging' })).body
  const staging = a.app.services.sync.callerOf(made.token)
  const plain = a.app.services.sync.callerOf(
    (await req('POST', '/api/tokens', { name: 'sync-default', permissions: ['flag:evaluate'] })).body.token,
  )
  const valueIn = (document: string) => {
    const flag = (JSON.parse(document) as { flags: Record<string, { variants: Record<string, number>; defaultVariant: string }> }).flags.f
    return flag?.variants[flag.defaultVariant]
  }
  expect(valueIn(a.app.services.sync.documentFor(await staging))).toBe(2)
  expect(valueIn(a.app.services.sync.documentFor(await plain))).toBe(1)
  // a change confined to staging leaves the default environment's document as it was: nothing is pushed
  const before = a.app.services.sync.documentFor(await plain)
  expect((await req('PUT', '/api/flags/f?environment=staging', { value: 3 })).status).toBe(200)
  expect(a.app.services.sync.documentFor(await plain)).toBe(before)
  expect(valueIn(a.app.services.sync.documentFor(await staging))).toBe(3)
})

test("a change confined to staging moves the flag's revision but not development's bulk ETag or metadata.revision; a shared change moves both", async () => {
  const a = await app()
  const req = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  expect((await req('POST', '/api/flags', { name: 'f', type: 'INTEGER', value: 1 })).status).toBe(201)
  expect((await req('POST', '/api/flags', { name: 'g', type: 'INTEGER', value: 1 })).status).toBe(201)
  expect((await req('PUT', '/api/environments/staging', {})).status).toBe(201)
  const stage = (await req('POST', '/api/tokens', { name: 'stage', environment: 'staging', permissions: ['flag:evaluate'] })).body.token
  const bulk = (token: string, etag?: string) =>
    a.req('POST', '/ofrep/v1/evaluate/flags', { token, body: { context: {} }, headers: etag ? { 'if-none-match': etag } : {} })
  const one = (token: string) => a.req('POST', '/ofrep/v1/evaluate/flags/f', { token, body: { context: {} } })
  const devTag = (await bulk(a.adminToken)).headers.get('etag') as string
  const stageTag = (await bulk(stage)).headers.get('etag') as string
  expect((await req('PUT', '/api/flags/f?environment=staging', { value: 2 })).body.revision).toBe(2)
  expect((await bulk(a.adminToken, devTag)).status).toBe(304)
  expect((await one(a.adminToken)).body.metadata.revision).toBe(1)
  const moved = await bulk(stage, stageTag)
  expect(moved.status).toBe(200)
  expect((await one(stage)).body.metadata.revision).toBe(2)
  // the revision development last saw survives a restart, and a change of its own moves it
  const b = await a.restart({ FLAGD_ENVIRONMENT: 'development' })
  apps = apps.filter((x) => x !== a).concat(b)
  const bulkB = (etag: string) =>
    b.req('POST', '/ofrep/v1/evaluate/flags', { token: b.adminToken, body: { context: {} }, headers: { 'if-none-match': etag } })
  expect((await bulkB(devTag)).status).toBe(304)
  expect((await b.req('PUT', '/api/flags/f', { token: b.adminToken, body: { description: 'shared' } })).body.revision).toBe(3)
  expect((await bulkB(devTag)).status).toBe(200)
  const answer = await b.req('POST', '/ofrep/v1/evaluate/flags/f', { token: b.adminToken, body: { context: {} } })
  expect(answer.body.metadata.revision).toBe(3)
})
