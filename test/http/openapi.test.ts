/**
 * docs/api.md#openapi: the OpenAPI document validates, covers every route, and the explorer works offline.
 * Spectral lints it in-process: `spectral:oas` must report nothing, and every OWASP API-security
 * rule that still fires must be a deliberate choice explained in docs/api.md's "OpenAPI" table.
 * Every example and default is checked against its schema by `exampleProblems`, not by Spectral.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import SwaggerParser from '@apidevtools/swagger-parser'
import { Document, Spectral } from '@stoplight/spectral-core'
import owasp from '@stoplight/spectral-owasp-ruleset'
import * as Parsers from '@stoplight/spectral-parsers'
import { oas } from '@stoplight/spectral-rulesets'
import { documentedPath } from '../../src/http/route-spec.ts'
import { exampleProblems } from '../helpers/openapi-conformance.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
let doc: any
let text: string
beforeAll(async () => {
  t = await createTestApp()
  text = (await t.req('GET', '/api/openapi.json')).text
  doc = JSON.parse(text)
})
afterAll(() => t.close())

test('documents {flagName} as one path parameter that may contain /', () => {
  const op = doc.paths['/api/flags/{flagName}'].get
  expect(op.parameters[0]).toMatchObject({ name: 'flagName', in: 'path', required: true })
  expect(op.parameters[0].description).toContain('/')
  expect(Object.keys(doc.paths).some((p) => p.includes('*'))).toBe(false)
  expect(doc.components.schemas.Flag.oneOf).toHaveLength(8)
  expect(doc.components.schemas.Flag.discriminator.propertyName).toBe('type')
})

test('is OpenAPI 3.0.x and passes swagger-parser validation', async () => {
  expect(doc.openapi).toMatch(/^3\.0\.\d+$/)
  await SwaggerParser.validate(structuredClone(doc))
})

test('documents every route the app serves', () => {
  const documented = new Set<string>()
  for (const [path, ops] of Object.entries<Record<string, unknown>>(doc.paths))
    for (const m of Object.keys(ops)) documented.add(`${m.toUpperCase()} ${path}`)
  const served = t.app.http.routes
    // the explorer, the document itself, the web UI and its icon are pages, not API operations
    .filter(
      (r) =>
        !r.path.startsWith('/api/docs') &&
        r.path !== '/api/openapi.json' &&
        r.path !== '/' &&
        !r.path.startsWith('/ui/') &&
        r.path !== '/favicon.ico',
    )
    .map((r) => `${r.method} ${documentedPath(r)}`)
  for (const route of served) expect(documented).toContain(route)
})

test('every operation has a summary, responses with descriptions, and says who may call it', () => {
  for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      expect(op.summary, `${method} ${path}`).toBeString()
      expect(op.description, `${method} ${path}`).toMatch(/Requires|No authentication/)
      for (const r of Object.values<any>(op.responses)) if (!r.$ref) expect(r.description).toBeString()
      const secured = (op.security ?? []).length > 0
      expect(secured).toBe(!/No authentication/.test(op.description))
    }
  }
  expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
  expect(doc.components.securitySchemes.apiKeyAuth).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' })
  for (const ops of Object.values<Record<string, any>>(doc.paths)) {
    for (const op of Object.values<any>(ops))
      if ((op.security ?? []).length > 0) expect(op.security).toEqual([{ bearerAuth: [] }, { apiKeyAuth: [] }])
  }
  const ids = Object.values<Record<string, any>>(doc.paths).flatMap((ops) => Object.values<any>(ops).map((op) => op.operationId))
  expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z]+$/.test(id))).toBe(true)
  expect(new Set(ids).size).toBe(ids.length)
  expect(doc.components.schemas.Error.properties.error.required).toEqual(['code', 'message'])
})

test('has examples', () => {
  expect(JSON.stringify(doc)).toContain('"example"')
})

test('the explorer page and its assets are served locally', async () => {
  const page = await t.req('GET', '/api/docs')
  expect(page.headers.get('content-type')).toStartWith('text/html')
  expect(page.text).toContain('/api/docs/explorer.js')
  expect(page.text).not.toMatch(/https?:\/\//)
  expect((await t.req('GET', '/api/docs/explorer.js')).text).toContain("url: '/api/openapi.json'")
  const js = await t.req('GET', '/api/docs/swagger-ui-bundle.js')
  expect(js.status).toBe(200)
  expect(js.text.length).toBeGreaterThan(100_000)
  const css = await t.req('GET', '/api/docs/swagger-ui.css')
  expect(css.status).toBe(200)
})

test('the explorer cannot be framed, runs no inline script and keeps no pasted token', async () => {
  const page = await t.req('GET', '/api/docs')
  const csp = page.headers.get('content-security-policy') ?? ''
  expect(csp).toContain("frame-ancestors 'none'")
  expect(csp).toContain("script-src 'self'")
  expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/)
  expect(page.headers.get('x-frame-options')).toBe('DENY')
  expect(page.text).not.toMatch(/<script>(?!<)/) // every script is a file of this origin
  const init = await t.req('GET', '/api/docs/explorer.js')
  expect(init.status).toBe(200)
  expect(init.text).toContain('persistAuthorization: false')
  expect(init.text).not.toContain('persistAuthorization: true')
})

test('real responses match the document', async () => {
  const { conformance } = await import('../helpers/openapi-conformance.ts')
  const c = conformance(doc)
  const u = await t.userWith(['flag:read'])
  const calls: [string, string, { body?: unknown; token?: string; rawBody?: string; headers?: Record<string, string> }][] = [
    ['GET', '/health', {}],
    ['POST', '/api/login', { body: { username: 'admin', password: 'admin-password' } }],
    ['POST', '/api/login', { body: { username: 'admin', password: 'wrong-password' } }],
    ['POST', '/api/login', { body: { username: 'admin' } }],
    ['GET', '/api/me', { token: t.adminToken }],
    ['GET', '/api/users', { token: t.adminToken }],
    ['GET', '/api/users', {}],
    ['GET', '/api/users', { token: u.token }],
    ['GET', `/api/users/${u.id}`, { token: t.adminToken }],
    ['GET', '/api/users/nope', { token: t.adminToken }],
    ['POST', '/api/users', { token: t.adminToken, body: { username: 'conform', password: 'password1' } }],
    ['POST', '/api/users', { token: t.adminToken, body: { username: 'conform', password: 'password1' } }],
    ['POST', '/api/users', { token: t.adminToken, rawBody: '{}' }],
    ['PUT', `/api/users/${u.id}`, { token: t.adminToken, body: { permissions: ['flag:write'] } }],
    ['GET', '/api/sessions', { token: t.adminToken }],
    ['DELETE', `/api/users/${u.id}`, { token: t.adminToken }],
    ['POST', '/api/logout', { token: (await t.userWith([])).token }],
    ['DELETE', '/api/sessions/nope', { token: t.adminToken }],
    [
      'POST',
      '/api/flags',
      { token: t.adminToken, body: { name: 'doc/int', type: 'INTEGER', defaultValue: 2, value: 3, minValue: 1, maxValue: 9 } },
    ],
    [
      'POST',
      '/api/flags',
      { token: t.adminToken, body: { name: 'doc/tag', type: 'TAG', enumValues: ['a', 'b'], value: ['a'], maxCount: 2 } },
    ],
    ['POST', '/api/flags', { token: t.adminToken, body: { name: 'doc/ab', type: 'AB-TEST', chancePercentB: 12.5 } }],
    ['POST', '/api/flags', { token: t.adminToken, body: { name: 'doc/enum', type: 'ENUM', enumValues: ['x'] } }],
    [
      'POST',
      '/api/flags',
      { token: t.adminToken, body: { name: 'doc/str', type: 'STRING', regexPattern: '^a', defaultValue: 'ab', maxLength: 4 } },
    ],
    ['POST', '/api/flags', { token: t.adminToken, body: { name: 'doc/bool', type: 'BOOLEAN', value: true } }],
    ['POST', '/api/flags', { token: t.adminToken, body: { name: 'doc/bool', type: 'BOOLEAN' } }],
    ['POST', '/api/flags', { token: t.adminToken, body: { name: 'doc/bad', type: 'INTEGER', value: 'x' } }],
    ['GET', '/api/flags', { token: t.adminToken }],
    ['GET', '/api/flags?prefix=doc/', { token: t.adminToken }],
    ['GET', '/api/flags/doc/int', { token: t.adminToken }],
    ['GET', '/api/flags/doc%2Fint', { token: t.adminToken }],
    ['PUT', '/api/flags/doc/int', { token: t.adminToken, body: { value: 4 } }],
    ['PUT', '/api/flags/doc/int', { token: t.adminToken, body: { value: 40 } }],
    ['DELETE', '/api/flags/doc/int', { token: t.adminToken }],
    ['DELETE', '/api/flags/doc/int', { token: t.adminToken }],
    ['GET', '/api/migrations/export', { token: t.adminToken }],
    ['GET', '/migration/export', {}],
    [
      'PUT',
      '/api/migrations?dryRun=true',
      {
        token: t.adminToken,
        body: { environment: 'x', version: '1.0.0', createdAt: '2026-11-22T10:15:00.123Z', flags: { 'm/a': { type: 'BOOLEAN' } } },
      },
    ],
    [
      'PUT',
      '/api/migrations',
      {
        token: t.adminToken,
        body: { environment: 'x', version: '1.0.0', createdAt: '2026-11-22T10:15:00.123Z', flags: { 'm/a': { type: 'BOOLEAN' } } },
      },
    ],
    ['PUT', '/api/migrations', { token: t.adminToken, body: { environment: 'x', flags: {} } }],
    ['PATCH', '/api/migrations', { token: t.adminToken, body: { url: 'http://127.0.0.1:1/' } }],
    ['PATCH', '/api/migrations', { token: t.adminToken, body: { url: 'http://0.0.0.0:9/' } }],
    [
      'POST',
      '/api/tokens',
      { token: t.adminToken, body: { name: 'doc token', permissions: ['flag:read'], flagPrefixes: ['doc/'], expiresAt: '2999-01-01' } },
    ],
    ['POST', '/api/tokens', { token: t.adminToken, body: { name: 'doc token', permissions: [] } }],
    ['POST', '/api/tokens', { token: t.adminToken, body: { name: 'other', permissions: ['x'] } }],
    ['GET', '/api/tokens', { token: t.adminToken }],
    ['GET', '/api/tokens/nope', { token: t.adminToken }],
    ['DELETE', '/api/tokens/nope', { token: t.adminToken }],
  ]
  const problems: string[] = []
  const made = await t.req('POST', '/api/tokens', { token: t.adminToken, body: { name: 'conform', permissions: ['flag:read'] } })
  await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'doc/exp', type: 'AB-TEST' } })
  const bulkTag = (await t.req('POST', '/ofrep/v1/evaluate/flags', { token: t.adminToken, body: {} })).headers.get('etag') as string
  calls.push(
    ['POST', '/ofrep/v1/evaluate/flags/doc/exp', { token: t.adminToken, body: { context: { targetingKey: 'u1' } } }],
    ['POST', '/ofrep/v1/evaluate/flags/doc/bool', { token: t.adminToken }],
    ['POST', '/ofrep/v1/evaluate/flags/doc/none', { token: t.adminToken, body: {} }],
    ['POST', '/ofrep/v1/evaluate/flags/doc/exp', { token: t.adminToken, rawBody: '{' }],
    ['POST', '/ofrep/v1/evaluate/flags/doc/exp', { token: t.adminToken, body: { context: 1 } }],
    ['POST', '/ofrep/v1/evaluate/flags/doc/exp', {}],
    ['POST', '/ofrep/v1/evaluate/flags', { token: t.adminToken, body: { context: { targetingKey: 'u1' } } }],
    ['POST', '/ofrep/v1/evaluate/flags', { token: t.adminToken, rawBody: 'x' }],
    ['POST', '/ofrep/v1/evaluate/flags', { token: t.adminToken, body: {}, headers: { 'if-none-match': bulkTag } }],
    ['GET', '/api/flags/doc/bool', { token: t.adminToken, headers: { 'if-none-match': '"1"' } }],
    ['GET', '/api/audit?limit=5', { token: t.adminToken }],
    ['GET', '/api/audit?flag=doc/bool', { token: t.adminToken }],
    ['GET', '/api/audit?limit=0', { token: t.adminToken }],
    ['POST', '/api/rollbacks', { token: t.adminToken, body: { name: 'doc/bool', revision: 1 } }],
    ['POST', '/api/rollbacks', { token: t.adminToken, body: { name: 'doc/bool', revision: 77 } }],
    ['POST', '/api/rollbacks', { token: t.adminToken, body: { name: 'doc/bool' } }],
  )
  calls.push(
    ['GET', `/api/tokens/${made.body.id}`, { token: t.adminToken }],
    ['GET', '/api/me', { token: made.body.token }],
    ['POST', '/api/logout', { token: made.body.token }],
    ['DELETE', `/api/tokens/${made.body.id}`, { token: t.adminToken }],
    ['GET', '/api/me', { token: made.body.token }],
  )
  for (const [method, path, o] of calls) {
    const res = await t.req(method, path, o)
    problems.push(...c.check(method, path, res.status, res.body))
  }
  expect(problems).toEqual([])
})

test("every example and default matches its schema (as Spectral's oas3-valid-*-example rules check)", () => {
  expect(exampleProblems(doc)).toEqual([])
  // the check finds what it is for: a wrong example of a schema, and of a media type
  const wrong = structuredClone(doc)
  const [name, schema] = Object.entries(wrong.components.schemas as Record<string, any>).find(([, s]) => s.type === 'object') as [
    string,
    any,
  ]
  schema.example = 'not an object'
  const media = Object.values(wrong.paths as Record<string, any>)
    .flatMap((item) => Object.values(item as Record<string, any>))
    .flatMap((op) => Object.values((op.responses ?? {}) as Record<string, any>))
    .map((res) => res.content?.['application/json'])
    .find((m) => m?.schema)
  media.example = 42
  const found = exampleProblems(wrong)
  expect(found.some((p) => p.includes(`components.schemas.${name}.example`))).toBe(true)
  expect(found.some((p) => p.includes('content.application/json.example'))).toBe(true)
})

// Spectral walks the whole document rule by rule: on a busy 2-core machine it has taken over
// half a minute, so these two may run longer than the suite's default (no time is asserted).
// One run with both rulesets reads the document once for both tests. Its two example rules are off:
// they compile a schema for every example (8 of the 12 CPU-s spectral:oas took); the test above
// checks the same with one compiled validator per schema.
const LINT_MAY_TAKE_MS = 180_000
const EXAMPLE_RULES = { 'oas3-valid-schema-example': 'off', 'oas3-valid-media-example': 'off' }

let linted: Promise<{ code: string; at: string; message: string }[]> | undefined
function lint() {
  linted ??= (async () => {
    const spectral = new Spectral()
    spectral.setRuleset({
      extends: [
        [oas as never, 'recommended'],
        [owasp as never, 'recommended'],
      ],
      rules: EXAMPLE_RULES,
    } as never)
    const results = await spectral.run(new Document(text, Parsers.Json))
    return results.map((r) => ({ code: String(r.code), at: r.path.join('.'), message: r.message }))
  })()
  return linted
}

test(
  'spectral:oas reports no error, warning or hint',
  async () => {
    const results = (await lint()).filter((r) => !r.code.startsWith('owasp:'))
    expect(results.map((r) => `${r.code} at ${r.at}: ${r.message}`)).toEqual([])
  },
  LINT_MAY_TAKE_MS,
)

test(
  'every OWASP finding left is a deliberate choice listed in docs/api.md (OpenAPI)',
  async () => {
    const readme = readFileSync(join(import.meta.dir, '../../docs/api.md'), 'utf8')
    const codes = [...new Set((await lint()).map((r) => r.code).filter((code) => code.startsWith('owasp:')))].sort()
    expect(codes.length).toBeGreaterThan(0) // the OWASP ruleset ran
    expect(codes.filter((code) => !readme.includes(`\`${code}\``))).toEqual([])
  },
  LINT_MAY_TAKE_MS,
)
