/**
 * Reads that serve one scope (a token's flag prefixes, its environment) after another scope asked
 * first, over HTTP exactly as the findings were reported (docs/architecture.md#caching,
 * docs/environments.md#evaluation): a confined token's list is never an earlier caller's, a token
 * bound to an environment gets that environment's flagd export, and `?environment=` is taken by
 * every flag route.
 */

import { afterEach, expect, test } from 'bun:test'
import { eventually, wakeSignal } from '../helpers/eventually.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let apps: TestApp[] = []
afterEach(async () => {
  for (const a of apps) await a.close()
  apps = []
})

async function app(env: Record<string, string> = {}): Promise<TestApp> {
  const a = await createTestApp(env)
  apps.push(a)
  return a
}

/** What a flagd document's flag serves without a rule: its default variant's value. */
const servedBy = (doc: { flags: Record<string, { variants: Record<string, unknown>; defaultVariant: string }> }, name: string) => {
  const flag = doc.flags[name] as { variants: Record<string, unknown>; defaultVariant: string }
  return flag.variants[flag.defaultVariant]
}

/** Makes an API token and answers its secret. */
async function tokenOf(a: TestApp, body: Record<string, unknown>): Promise<string> {
  const made = await a.req('POST', '/api/tokens', { token: a.adminToken, body: { name: `t${Math.random()}`.slice(0, 20), ...body } })
  expect(made.status).toBe(201)
  return made.body.token as string
}

test('a token confined to mobile/ listing ?prefix=web/ gets [] after an unconfined caller listed every flag', async () => {
  const a = await app()
  for (const name of ['mobile/a', 'mobile/b', 'mobilex', 'web/c'])
    expect((await a.req('POST', '/api/flags', { token: a.adminToken, body: { name, type: 'BOOLEAN' } })).status).toBe(201)
  const mobile = await tokenOf(a, { permissions: ['flag:read'], flagPrefixes: ['mobile/'] })
  const everything = await a.req('GET', '/api/flags', { token: a.adminToken })
  expect(everything.body.map((f: { name: string }) => f.name)).toEqual(['mobile/a', 'mobile/b', 'mobilex', 'web/c'])
  const confined = await a.req('GET', '/api/flags?prefix=web/', { token: mobile })
  expect(confined.status).toBe(200)
  expect(confined.body).toEqual([])
  // its own flags still listed, and nothing of another's
  const own = await a.req('GET', '/api/flags', { token: mobile })
  expect(own.body.map((f: { name: string }) => f.name)).toEqual(['mobile/a', 'mobile/b'])
})

test("a token bound to staging downloads staging's rules in the flagd format, named so", async () => {
  const a = await app()
  const admin = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  expect((await admin('POST', '/api/flags', { name: 'checkout', type: 'BOOLEAN', value: false })).status).toBe(201)
  expect((await admin('PUT', '/api/environments/staging', {})).status).toBe(201)
  expect((await admin('PUT', '/api/flags/checkout?environment=staging', { value: true })).status).toBe(200)
  // the default environment's document first, so a memo of it would be at hand
  const production = await admin('GET', '/api/migrations/export?format=flagd')
  expect(servedBy(production.body, 'checkout')).toBe(false)
  const staging = await tokenOf(a, { permissions: ['flag:read', 'migration:read'], environment: 'staging' })
  const served = await a.req('GET', '/api/migrations/export?format=flagd', { token: staging })
  expect(served.status).toBe(200)
  expect(servedBy(served.body, 'checkout')).toBe(true)
  expect(served.body.metadata.environment).toBe('staging')
  expect(served.headers.get('content-disposition')).toContain('flagd_flags_staging_')
  // the migration file is a management read: the default environment unless ?environment= names one;
  // an explicit ?environment= is taken as asked in both formats
  const file = await a.req('GET', '/api/migrations/export', { token: staging })
  expect(file.body.environment).toBe('development')
  expect(file.body.flags.checkout.value).toBe(false)
  const asked = await a.req('GET', '/api/migrations/export?format=flagd&environment=development', { token: staging })
  expect(asked.body.metadata.environment).toBe('development')
  expect(servedBy(asked.body, 'checkout')).toBe(false)
})

test('DELETE /api/flags/{name}?environment= deletes the flag as a whole; an unknown environment is 404 and deletes nothing', async () => {
  const a = await app()
  const admin = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  expect((await admin('PUT', '/api/environments/staging', {})).status).toBe(201)
  expect((await admin('POST', '/api/flags', { name: 'web/old', type: 'BOOLEAN' })).status).toBe(201)
  const unknown = await admin('DELETE', '/api/flags/web/old?environment=nowhere')
  expect(unknown.status).toBe(404)
  expect((await admin('GET', '/api/flags/web/old')).status).toBe(200)
  const deleted = await admin('DELETE', '/api/flags/web/old?environment=staging')
  expect(deleted.status).toBe(200)
  expect(deleted.body).toEqual({ deleted: true, name: 'web/old' })
  expect((await admin('GET', '/api/flags/web/old')).status).toBe(404)
  expect((await admin('GET', '/api/flags/web/old?environment=staging')).status).toBe(404)
})

test('GET /api/flags/{name}/environments takes ?environment= too (404 when unknown)', async () => {
  const a = await app()
  expect((await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'f', type: 'BOOLEAN' } })).status).toBe(201)
  expect((await a.req('GET', '/api/flags/f/environments?environment=development', { token: a.adminToken })).status).toBe(200)
  expect((await a.req('GET', '/api/flags/f/environments?environment=nowhere', { token: a.adminToken })).status).toBe(404)
})

test('the sync document of a token bound to staging names staging, after the default one was built', async () => {
  const a = await app()
  expect((await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'f', type: 'BOOLEAN', value: true } })).status).toBe(201)
  expect((await a.req('PUT', '/api/environments/staging', { token: a.adminToken, body: {} })).status).toBe(201)
  const secret = await tokenOf(a, { permissions: ['flag:evaluate'], environment: 'staging' })
  const sync = a.app.services.sync
  expect(JSON.parse(sync.documentFor({ kind: 'anonymous' })).metadata.environment).toBe('development')
  const caller = await sync.callerOf(secret)
  expect(JSON.parse(sync.documentFor(caller)).metadata.environment).toBe('staging')
})

test('every flag route takes ?environment=: an unknown one is 404, never a 400 for the parameter', async () => {
  const a = await app()
  const admin = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  expect((await admin('PUT', '/api/environments/staging', {})).status).toBe(201)
  const document = (await admin('GET', '/api/openapi.json')).body as { paths: Record<string, Record<string, unknown>> }
  const operations = Object.entries(document.paths)
    .filter(([path]) => path === '/api/flags' || path.startsWith('/api/flags/'))
    .flatMap(([path, methods]) => Object.keys(methods).map((method) => [method.toUpperCase(), path] as const))
  expect(operations.map(([m, p]) => `${m} ${p}`).sort()).toContainValues([
    'DELETE /api/flags/{flagName}',
    'GET /api/flags/{flagName}/environments',
    'GET /api/flags/{flagName}/usage',
    'POST /api/flags/{flagName}/evaluate',
  ])
  let made = 0
  for (const [method, template] of operations) {
    const path = template.replace('{flagName}', 'f')
    const body = () =>
      method === 'POST' && path === '/api/flags' ? { name: `new${++made}`, type: 'BOOLEAN' } : method === 'GET' ? undefined : {}
    // a flag to act on, made anew for each (a DELETE takes it away)
    if ((await admin('GET', '/api/flags/f')).status === 404)
      expect((await admin('POST', '/api/flags', { name: 'f', type: 'BOOLEAN' })).status).toBe(201)
    const unknown = await admin(method, `${path}?environment=nowhere`, body())
    expect([method, template, unknown.status, unknown.body?.error?.message]).toEqual([
      method,
      template,
      404,
      'no environment named "nowhere"',
    ])
    // the impact read names a metric; f has no guard, so staging answers that no guard reads it
    if (template.endsWith('/impact')) {
      const unguarded = await admin(method, `${path}?environment=staging&metric=app.errors`)
      expect([template, unguarded.status, unguarded.body?.error?.message]).toEqual([
        template,
        404,
        'no guard of f in staging reads a metric named "app.errors"; f has no guarded rollout in staging',
      ])
      continue
    }
    // the rollout read: f has no rollout in staging, which is what the 404 says
    if (template.endsWith('/rollout')) {
      const none = await admin(method, `${path}?environment=staging`)
      expect([template, none.status, none.body?.error?.message]).toEqual([template, 404, 'flag f has no rollout in environment staging'])
      continue
    }
    const known = await admin(method, `${path}?environment=staging`, body())
    expect([method, template, known.status]).toEqual([method, template, known.status < 300 ? known.status : 200])
  }
})

/** An open event stream read as a client reads it: the text so far, and a wait for what must come. */
async function openStream(a: TestApp, path: string, token: string) {
  const res = await a.app.http.handle(new Request(`http://localhost${path}`, { headers: { authorization: `Bearer ${token}` } }))
  expect(res.status).toBe(200)
  const reader = res.body?.getReader() as ReadableStreamDefaultReader<Uint8Array>
  const decoder = new TextDecoder()
  let text = ''
  const arrived = wakeSignal() // fired by each chunk: until() looks again
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }))
      if (done) break
      text += decoder.decode(value)
      arrived.fire()
    }
  })()
  return {
    get text() {
      return text
    },
    /** Waits until `part` has been received, looking again at each chunk (20 s against a hang). */
    async until(part: string): Promise<void> {
      await eventually(() => text.includes(part), {
        wakeOn: arrived.wakeOn,
        what: () => `not received: ${part}; got ${JSON.stringify(text)}`,
      })
    },
    close: () => reader.cancel().catch(() => {}),
  }
}

test.each([['the confined person first'], ['the unconfined one first']])(
  'the management stream renders a confined person’s events for their prefixes, whoever else listens (%s)',
  async (order) => {
    const a = await app()
    const admin = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
    const made = await admin('POST', '/api/users', {
      username: 'mobile-dev',
      password: 'mobile-dev-password',
      permissions: ['flag:read'],
      flagPrefixes: ['mobile/'],
    })
    expect(made.status).toBe(201)
    const session = await a.login('mobile-dev', 'mobile-dev-password')
    // streams hear a change in the order they opened
    const confinedFirst = order === 'the confined person first'
    const early = await openStream(a, '/api/events', confinedFirst ? session : a.adminToken)
    const late = await openStream(a, '/api/events', confinedFirst ? a.adminToken : session)
    const [confined, everyone] = confinedFirst ? [early, late] : [late, early]
    expect((await admin('POST', '/api/flags', { name: 'web/secret', type: 'BOOLEAN' })).status).toBe(201)
    expect((await admin('POST', '/api/flags', { name: 'mobile/own', type: 'BOOLEAN' })).status).toBe(201)
    // the second change reaches both; the first was sent before it, to whoever may see it
    await confined.until('mobile/own')
    await everyone.until('mobile/own')
    expect(everyone.text).toContain('web/secret')
    expect(confined.text).not.toContain('web/secret')
    await confined.close()
    await everyone.close()
  },
)

test("a session evaluating staging over OFREP is pointed at, and hears, staging's event stream", async () => {
  const a = await app()
  const admin = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  for (const name of ['f', 'g']) expect((await admin('POST', '/api/flags', { name, type: 'BOOLEAN', value: false })).status).toBe(201)
  expect((await admin('PUT', '/api/environments/staging', {})).status).toBe(201)
  const bulk = await admin('POST', '/ofrep/v1/evaluate/flags?environment=staging', {})
  expect(bulk.status).toBe(200)
  const uri = bulk.body.eventStreams[0].endpoint.requestUri as string
  expect(uri).toContain('environment=staging')
  // the advertised stream, opened as a browser's EventSource does: by its ticket alone
  const res = await a.app.http.handle(new Request(`http://localhost${uri}`))
  expect(res.status).toBe(200)
  const reader = res.body?.getReader() as ReadableStreamDefaultReader<Uint8Array>
  let text = ''
  const events = async (count: number) => {
    while ((text.match(/refetchEvaluation/g) ?? []).length < count) text += new TextDecoder().decode((await reader.read()).value)
  }
  // a change of the default environment's state first: no event for staging; then one of staging's
  expect((await admin('PUT', '/api/flags/f', { value: true })).status).toBe(200)
  const stagingChange = await admin('PUT', '/api/flags/g?environment=staging', { value: true })
  expect(stagingChange.status).toBe(200)
  await events(1)
  const received = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]))
  const [newest] = (await admin('GET', '/api/audit?flag=g&environment=staging')).body
  expect(received).toEqual([newest.id])
  await reader.cancel()
})
