/**
 * Other tools' files over HTTP (docs/migrations.md#from-other-tools): `?format=` on PUT and PATCH
 * /api/migrations, YAML and TOML bodies for Flipt, the clear 400s and 415s of a bad format name, an
 * unreadable file, a file posted as the wrong tool's, and the URL import of a YAML file.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

const FIXTURES = join(import.meta.dir, '../fixtures/foreign/flipt')
const yaml = readFileSync(join(FIXTURES, 'export.yml'), 'utf8')
let t: TestApp
let remote: ReturnType<typeof Bun.serve>

beforeAll(async () => {
  t = await createTestApp({ FLAGD_IMPORT_ALLOWED_HOSTS: '127.0.0.1' })
  remote = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (request) =>
      new URL(request.url).pathname === '/flags.yml'
        ? new Response(yaml, { headers: { 'content-type': 'text/plain' } })
        : new Response('no', { status: 404 }),
  })
})
afterAll(async () => {
  remote.stop(true)
  await t.close()
})

const put = (query: string, body: string, contentType: string) =>
  t.req('PUT', `/api/migrations${query}`, { token: t.adminToken, rawBody: body, headers: { 'content-type': contentType } })

test('a Flipt export as YAML imports with format=flipt: skipped and source.format in the answer', async () => {
  const res = await put('?format=flipt&dryRun=true', yaml, 'application/yaml')
  expect(res.status).toBe(200)
  expect(res.body.source.format).toBe('flipt')
  expect(res.body.summary.created).toBe(6)
  expect(res.body.skipped.map((s: { name: string }) => s.name).sort()).toEqual(['greeting', 'release-date'])
  expect((await put('?format=flipt&dryRun=true', yaml, 'text/yaml; charset=utf-8')).status).toBe(200)
})

test('a TOML body is read as TOML; a migration file still answers skipped: []', async () => {
  const res = await put('?format=flipt', readFileSync(join(FIXTURES, 'small.toml'), 'utf8'), 'application/toml')
  expect(res.status).toBe(200)
  expect(res.body.changes.map((c: { name: string }) => c.name)).toEqual(['toml-switch'])
  const plain = await t.req('PUT', '/api/migrations', {
    token: t.adminToken,
    body: { environment: 'x', version: '1.0.0', createdAt: '2026-01-01T00:00:00Z', flags: {} },
  })
  expect(plain.body.skipped).toEqual([])
})

test('a format name flagd does not know is a 400 naming the parameter; YAML without a format that takes it is a 415', async () => {
  const bad = await put('?format=flipd', '{}', 'application/json')
  expect(bad.status).toBe(400)
  expect(bad.body.error.details).toMatchObject({ field: 'format', reason: 'must be one of unleash, launchdarkly, flipt, gofeatureflag' })
  const noFormat = await put('', yaml, 'application/yaml')
  expect(noFormat.status).toBe(415)
  expect(noFormat.body.error.message).toContain('format=flipt or format=gofeatureflag')
})

test('an unreadable YAML file is a 400 on body saying so, and changes nothing', async () => {
  const res = await put('?format=flipt', 'flags: [\n  - key: a\n', 'application/yaml')
  expect(res.status).toBe(400)
  expect(res.body.error.details).toMatchObject({ field: 'body', reason: expect.stringContaining('not valid YAML') })
  const bomb = await put('?format=flipt', `a: ${'['.repeat(40)}${']'.repeat(40)}`, 'application/yaml')
  expect(bomb.status).toBe(400)
})

test("another tool's file posted as Flipt is a 400 saying it is not Flipt's", async () => {
  const res = await t.req('PUT', '/api/migrations?format=flipt', { token: t.adminToken, body: { version: 1, features: [] } })
  expect(res.status).toBe(400)
  expect(JSON.stringify(res.body.error)).toContain('not a Flipt export')
})

test('the URL import reads a YAML file by its name when the format takes YAML', async () => {
  const url = `http://127.0.0.1:${remote.port}/flags.yml`
  const res = await t.req('PATCH', '/api/migrations?format=flipt&dryRun=true', { token: t.adminToken, body: { url } })
  expect(res.status).toBe(200)
  expect(res.body.source.format).toBe('flipt')
  expect(res.body.skipped).toHaveLength(2)
})

test('a YAML file by URL without a format is a 400 saying which formats read it, not a failing remote', async () => {
  const url = `http://127.0.0.1:${remote.port}/flags.yml`
  const res = await t.req('PATCH', '/api/migrations?dryRun=true', { token: t.adminToken, body: { url } })
  expect(res.status).toBe(400)
  expect(res.body.error.details).toMatchObject({ field: 'url', reason: expect.stringContaining('format=flipt or format=gofeatureflag') })
})
