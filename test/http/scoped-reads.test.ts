/**
 * Reads that serve one scope (a token's flag prefixes, its environment) after another scope asked
 * first, over HTTP exactly as the findings were reported (docs/architecture.md#caching,
 * docs/environments.md#evaluation): a confined token's list is never an earlier caller's, a token
 * bound to an environment gets that environment's flagd export, and `?environment=` is taken by
 * every flag route.
 */

import { afterEach, expect, test } from 'bun:test'
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
