/**
 * Auth matrix: every route × every kind of credential × path variants. No request may get
 * a 2xx it should not: only a live token whose user holds the route's permission (or a route open to
 * everyone, or to any logged-in user) succeeds.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SignJWT } from 'jose'
import { PERMISSIONS, type Permission } from '../../src/domain/permission.ts'
import { fixture } from '../helpers/fixtures.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

setDefaultTimeout(120_000)

type Need = Permission | 'open' | 'user'
interface Route {
  method: string
  path: string
  need: Need
  body?: () => unknown
}

let t: TestApp
// the services' clock: moved past an API token's expiry instead of waiting for it
let clock = Date.now()
const credentials: { name: string; token: string | undefined; permissions: readonly Permission[] | null }[] = []
let victimId = ''

beforeAll(async () => {
  t = await createTestApp({}, { now: () => new Date(clock) })
  await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'm/flag', type: 'BOOLEAN' } })
  victimId = (await t.userWith([], 'victim')).id
  const secret = new TextEncoder().encode(readFileSync(join(t.dataDir, 'jwt-secret'), 'utf8').trim())
  const claims = JSON.parse(Buffer.from(t.adminToken.split('.')[1] as string, 'base64url').toString())
  const revoked = await t.userWith([...PERMISSIONS], 'revoked')
  await t.req('POST', '/api/logout', { token: revoked.token })
  credentials.push(
    { name: 'none', token: undefined, permissions: null },
    { name: 'garbage', token: 'not.a.token', permissions: null },
    {
      name: 'expired',
      token: await new SignJWT({ ...claims, exp: Math.floor(Date.now() / 1000) - 5 }).setProtectedHeader({ alg: 'HS256' }).sign(secret),
      permissions: null,
    },
    { name: 'revoked', token: revoked.token, permissions: null },
    {
      name: 'forged',
      token: await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('x'.repeat(40))),
      permissions: null,
    },
  )
  for (const p of PERMISSIONS)
    credentials.push({ name: p, token: (await t.userWith([p], `only-${p.replace(':', '-')}`)).token, permissions: [p] })
  credentials.push({ name: 'none-granted', token: (await t.userWith([], 'nothing')).token, permissions: [] })
  // API tokens (docs/api.md#api-tokens): one per permission, and dead ones (revoked, expired, unknown)
  const apiToken = async (name: string, permissions: readonly Permission[], extra: Record<string, unknown> = {}) => {
    const res = await t.req('POST', '/api/tokens', { token: t.adminToken, body: { name, permissions, ...extra } })
    return res.body as { token: string; id: string }
  }
  for (const p of PERMISSIONS)
    credentials.push({ name: `api token ${p}`, token: (await apiToken(`only ${p}`, [p])).token, permissions: [p] })
  credentials.push({ name: 'api token none', token: (await apiToken('nothing', [])).token, permissions: [] })
  const dead = await apiToken('dead', [...PERMISSIONS])
  await t.req('DELETE', `/api/tokens/${dead.id}`, { token: t.adminToken })
  const expiring = await apiToken('expiring', [...PERMISSIONS], { expiresAt: new Date(clock + 1000).toISOString() })
  credentials.push(
    { name: 'revoked api token', token: dead.token, permissions: null },
    { name: 'expired api token', token: expiring.token, permissions: null },
    { name: 'unknown api token', token: `fdt_${'x'.repeat(43)}`, permissions: null },
  )
  clock += 1100
})
afterAll(() => t.close())

const routes = (): Route[] => [
  { method: 'GET', path: '/health', need: 'open' },
  { method: 'GET', path: '/api/openapi.json', need: 'open' },
  { method: 'GET', path: '/migration/export', need: 'open' },
  { method: 'GET', path: '/api/me', need: 'user' },
  { method: 'GET', path: '/api/users', need: 'user:read' },
  { method: 'GET', path: `/api/users/${victimId}`, need: 'user:read' },
  {
    method: 'POST',
    path: '/api/users',
    need: 'user:write',
    body: () => ({ username: `u${crypto.randomUUID().slice(0, 8)}`, password: 'password1' }),
  },
  { method: 'PUT', path: `/api/users/${victimId}`, need: 'user:write', body: () => ({ permissions: [] }) },
  { method: 'GET', path: '/api/flags', need: 'flag:read' },
  { method: 'GET', path: '/api/flags/m/flag', need: 'flag:read' },
  {
    method: 'POST',
    path: '/api/flags',
    need: 'flag:write',
    body: () => ({ name: `n/f${crypto.randomUUID().slice(0, 8)}`, type: 'BOOLEAN' }),
  },
  { method: 'PUT', path: '/api/flags/m/flag', need: 'flag:write', body: () => ({ description: crypto.randomUUID() }) },
  { method: 'GET', path: '/api/sessions', need: 'session:read' },
  { method: 'GET', path: '/api/migrations/export', need: 'migration:read' },
  { method: 'PUT', path: '/api/migrations?dryRun=true', need: 'migration:write', body: () => fixture('valid-merge.json') },
  { method: 'GET', path: '/api/tokens', need: 'token:read' },
  { method: 'GET', path: '/api/audit', need: 'audit:read' },
  { method: 'POST', path: '/api/rollbacks', need: 'flag:write', body: () => ({ name: 'm/flag', revision: 1 }) },
  { method: 'POST', path: '/ofrep/v1/evaluate/flags/m/flag', need: 'flag:evaluate', body: () => ({ context: { targetingKey: 'u' } }) },
  { method: 'POST', path: '/ofrep/v1/evaluate/flags', need: 'flag:evaluate', body: () => ({}) },
  {
    method: 'POST',
    path: '/api/tokens',
    need: 'token:write',
    body: () => ({ name: `t ${crypto.randomUUID().slice(0, 8)}`, permissions: [] }),
  },
]

const variants = (path: string): { path: string; same: boolean }[] => {
  const [p, q] = path.split('?') as [string, string | undefined]
  const query = q ? `?${q}` : ''
  const parts = p.split('/')
  return [
    { path, same: true },
    { path: `${p}/${query}`, same: !p.startsWith('/api/flags/') },
    { path: `/${p}${query}`, same: false },
    { path: p.replace('/api/', '/api/./') + query, same: true },
    { path: p.replace('/api/', '/api/flags/../') + query, same: true },
    { path: p.replace('/api/', '/api/%2e/') + query, same: true },
    {
      path:
        parts.map((s, i) => (i === 2 ? encodeURIComponent(s).replace(/^(.)/, (c) => `%${c.charCodeAt(0).toString(16)}`) : s)).join('/') +
        query,
      same: false,
    },
    { path: p.toUpperCase() + query, same: false },
  ]
}

function allowed(need: Need, permissions: readonly Permission[] | null): boolean {
  if (need === 'open') return true
  if (permissions === null) return false
  if (need === 'flag:evaluate' && permissions.includes('flag:read')) return true
  return need === 'user' || permissions.includes(need)
}

test('no credential gets a 2xx it should not, on any path variant', async () => {
  const problems: string[] = []
  let checked = 0
  for (const route of routes()) {
    for (const cred of credentials) {
      for (const v of variants(route.path)) {
        const res = await t.req(route.method, v.path, { token: cred.token, body: route.body?.() })
        checked++
        const ok = res.status >= 200 && res.status < 300
        if (ok && !allowed(route.need, cred.permissions)) problems.push(`${route.method} ${v.path} as ${cred.name} → ${res.status}`)
        if (res.status >= 500) problems.push(`${route.method} ${v.path} as ${cred.name} → ${res.status}`)
        if (v.same && v.path === route.path && allowed(route.need, cred.permissions) && !ok)
          problems.push(`${route.method} ${v.path} as ${cred.name} refused: ${res.status}`)
        if (!ok && cred.permissions === null && route.need !== 'open' && res.status !== 401 && res.status !== 404)
          problems.push(`${route.method} ${v.path} as ${cred.name} → ${res.status}, expected 401`)
      }
    }
  }
  expect(problems).toEqual([])
  expect(checked).toBeGreaterThan(1500)
})
