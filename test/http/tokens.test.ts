/** docs/api.md#api-tokens: API tokens over HTTP, from creation to revocation, and what they may see and do. */

import { expect, test } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { createTestApp, scenarioGroup, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
const group = scenarioGroup(
  async () => {
    t = await createTestApp()
  },
  () => t.close(),
)

const SECRET = /^fdt_[A-Za-z0-9_-]{43,}$/

/** Creates a token as the admin (or `as`) and returns the answer's body. */
async function makeToken(body: Record<string, unknown>, as = t.adminToken) {
  const res = await t.req('POST', '/api/tokens', { token: as, body })
  if (res.status !== 201) throw new Error(`creating token failed: ${res.status} ${res.text}`)
  return res.body as { token: string; id: string; name: string; lastUsedAt: string | null }
}

/** Every file under `dir`, read as text. */
function allFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    const s = statSync(path)
    return s.isDirectory() ? allFiles(path) : s.isFile() ? [readFileSync(path, 'latin1')] : []
  })
}

group('POST /api/tokens', () => {
  test('answers 201 with the secret once, the resource and a Location', async () => {
    const res = await t.req('POST', '/api/tokens', {
      token: t.adminToken,
      body: { name: 'ci deploy', permissions: ['flag:write', 'flag:read'] },
    })
    expect(res.status).toBe(201)
    expect(res.body.token).toMatch(SECRET)
    expect(res.headers.get('location')).toBe(`/api/tokens/${res.body.id}`)
    expect(res.body).toMatchObject({
      name: 'ci deploy',
      permissions: ['flag:read', 'flag:write'],
      flagPrefixes: [],
      createdBy: { type: 'user', name: 'admin', id: expect.any(String) },
      expiresAt: null,
      lastUsedAt: null,
    })
    expect(Object.keys(res.body).sort()).toEqual([
      'createdAt',
      'createdBy',
      'environment',
      'expiresAt',
      'flagPrefixes',
      'id',
      'lastUsedAt',
      'name',
      'permissions',
      'token',
    ])
    expect(res.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })

  test('the secret is never shown again and never stored: only its hash', async () => {
    const made = await makeToken({ name: 'never-again', permissions: ['flag:read'] })
    const list = await t.req('GET', '/api/tokens', { token: t.adminToken })
    const one = await t.req('GET', `/api/tokens/${made.id}`, { token: t.adminToken })
    for (const text of [list.text, one.text]) {
      expect(text).not.toContain(made.token)
      expect(text).not.toContain('secretHash')
      expect(text).not.toContain('"token"')
    }
    // a backup is written by an import: the state file and every backup must hold no usable secret
    const imported = await t.req('PUT', '/api/migrations', {
      token: t.adminToken,
      body: { environment: 'x', version: '1.0.0', createdAt: new Date().toISOString(), flags: { 'sec/x': { type: 'BOOLEAN' } } },
    })
    expect(imported.status).toBe(200)
    await t.app.store.flush()
    const files = allFiles(t.dataDir)
    expect(readdirSync(join(t.dataDir, 'backups')).length).toBeGreaterThan(0)
    expect(files.length).toBeGreaterThan(3)
    for (const text of files) expect(text).not.toContain(made.token.slice(4))
    expect(files.some((text) => text.includes(new Bun.CryptoHasher('sha256').update(made.token).digest('hex')))).toBe(true)
  })

  test('every secret is different', async () => {
    const a = await makeToken({ name: 'twin-a', permissions: [] })
    const b = await makeToken({ name: 'twin-b', permissions: [] })
    expect(a.token).not.toBe(b.token)
  })

  test('refuses bad input with the field named, and changes nothing', async () => {
    const before = (await t.req('GET', '/api/tokens', { token: t.adminToken })).body.length
    const cases: [Record<string, unknown>, string][] = [
      [{ permissions: [] }, 'name'],
      [{ name: '', permissions: [] }, 'name'],
      [{ name: 'x'.repeat(65), permissions: [] }, 'name'],
      [{ name: 'bad/name', permissions: [] }, 'name'],
      [{ name: 'ok' }, 'permissions'],
      [{ name: 'ok', permissions: ['flag:fly'] }, 'permissions'],
      [{ name: 'ok', permissions: 'flag:read' }, 'permissions'],
      [{ name: 'ok', permissions: [], expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt'],
      [{ name: 'ok', permissions: [], expiresAt: 'tomorrow' }, 'expiresAt'],
      [{ name: 'ok', permissions: [], expiresAt: '2999-01-01T00:00:00' }, 'expiresAt'],
      [{ name: 'ok', permissions: [], expiresAt: '2999-02-30' }, 'expiresAt'],
      [{ name: 'ok', permissions: [], expiresAt: 12345 }, 'expiresAt'],
      [{ name: 'ok', permissions: [], flagPrefixes: [''] }, 'flagPrefixes.0'],
      [{ name: 'ok', permissions: [], flagPrefixes: ['a/', 'b c'] }, 'flagPrefixes.1'],
      [{ name: 'ok', permissions: [], flagPrefixes: Array.from({ length: 21 }, (_, i) => `p${i}/`) }, 'flagPrefixes'],
      [{ name: 'ok', permissions: [], secret: 'mine' }, 'secret'],
    ]
    for (const [body, field] of cases) {
      const res = await t.req('POST', '/api/tokens', { token: t.adminToken, body })
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect(res.body.error.details.field, JSON.stringify(body)).toBe(field)
    }
    expect((await t.req('GET', '/api/tokens', { token: t.adminToken })).body.length).toBe(before)
  })

  test('accepts the characters the contract lists, and refuses a taken name with 409', async () => {
    await makeToken({ name: 'Deploy: prod_v2.1 -x', permissions: [] })
    const again = await t.req('POST', '/api/tokens', { token: t.adminToken, body: { name: 'Deploy: prod_v2.1 -x', permissions: [] } })
    expect(again.status).toBe(409)
    expect(again.body.error.details.field).toBe('name')
  })

  test('a future expiresAt is kept, normalised to UTC with milliseconds', async () => {
    const made = await makeToken({ name: 'expiring', permissions: [], expiresAt: '2999-06-01T12:00:00+02:00' })
    expect((made as unknown as { expiresAt: string }).expiresAt).toBe('2999-06-01T10:00:00.000Z')
    const day = await makeToken({ name: 'expiring-day', permissions: [], expiresAt: '2999-06-01' })
    expect((day as unknown as { expiresAt: string }).expiresAt).toBe('2999-06-01T00:00:00.000Z')
  })

  test('needs token:write, and a token never holds a permission its creator lacks', async () => {
    const reader = await t.userWith(['token:read'])
    const denied = await t.req('POST', '/api/tokens', { token: reader.token, body: { name: 'nope', permissions: [] } })
    expect(denied.status).toBe(403)
    expect(denied.body.error.details.required).toBe('token:write')

    const maker = await t.userWith(['token:write', 'flag:read'])
    const escalate = await t.req('POST', '/api/tokens', {
      token: maker.token,
      body: { name: 'escalate', permissions: ['flag:read', 'flag:write'] },
    })
    expect(escalate.status).toBe(403)
    expect(escalate.body.error.details.required).toBe('flag:write')
    const self = await t.req('POST', '/api/tokens', { token: maker.token, body: { name: 'more-tokens', permissions: ['token:read'] } })
    expect(self.status).toBe(403)
    expect(self.body.error.details.required).toBe('token:read')
    // flag:read grants flag:evaluate, so a reader may hand an application the evaluate permission
    const evaluate = await t.req('POST', '/api/tokens', { token: maker.token, body: { name: 'app', permissions: ['flag:evaluate'] } })
    expect(evaluate.status).toBe(201)
    expect(evaluate.body.createdBy).toEqual({ type: 'user', id: maker.id, name: maker.username })
  })
})

group('authenticating with a token', () => {
  test('Authorization: Bearer and X-API-Key both work; GET /api/me answers the token', async () => {
    const made = await makeToken({ name: 'reader', permissions: ['flag:read'] })
    await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'auth/x', type: 'BOOLEAN' } })
    const bearer = await t.req('GET', '/api/flags/auth/x', { token: made.token })
    expect(bearer.status).toBe(200)
    const key = await t.req('GET', '/api/flags/auth/x', { headers: { 'x-api-key': made.token } })
    expect(key.status).toBe(200)
    const me = await t.req('GET', '/api/me', { headers: { 'x-api-key': made.token } })
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({ id: made.id, name: 'reader', permissions: ['flag:read'] })
    expect(me.body.lastUsedAt).toMatch(/Z$/)
    expect(me.text).not.toContain(made.token)
    expect(me.body.username).toBeUndefined()
  })

  test('acts with the token permissions: writes without flag:write are 403', async () => {
    const made = await makeToken({ name: 'read-only', permissions: ['flag:read'] })
    const res = await t.req('POST', '/api/flags', { token: made.token, body: { name: 'ro/x', type: 'BOOLEAN' } })
    expect(res.status).toBe(403)
    expect(res.body.error.details.required).toBe('flag:write')
    expect((await t.req('GET', '/api/users', { token: made.token })).status).toBe(403)
  })

  test('unknown, malformed and mixed credentials are 401 with WWW-Authenticate', async () => {
    const made = await makeToken({ name: 'mixed', permissions: ['flag:read'] })
    const cases: Record<string, string>[] = [
      { authorization: `Bearer fdt_${'A'.repeat(43)}` },
      { 'x-api-key': `fdt_${'A'.repeat(43)}` },
      { 'x-api-key': t.adminToken }, // a session JWT is not an API key
      { 'x-api-key': 'fdt_ with spaces' },
      { 'x-api-key': '' },
      { authorization: `Bearer ${t.adminToken}`, 'x-api-key': made.token },
      { authorization: `Bearer ${made.token}x` },
      { authorization: `Bearer ${'fdt_'.padEnd(5000, 'a')}` },
    ]
    for (const headers of cases) {
      const res = await t.req('GET', '/api/me', { headers })
      expect(res.status, JSON.stringify(headers).slice(0, 80)).toBe(401)
      expect(res.headers.get('www-authenticate')).toStartWith('Bearer')
      expect(res.body.error.code).toBe('UNAUTHORIZED')
    }
    const same = await t.req('GET', '/api/me', { headers: { authorization: `Bearer ${made.token}`, 'x-api-key': made.token } })
    expect(same.status).toBe(200)
  })

  test('a revoked token is refused from the very next request; revoking twice is 404', async () => {
    const made = await makeToken({ name: 'short-lived', permissions: ['flag:read'] })
    expect((await t.req('GET', '/api/flags', { token: made.token })).status).toBe(200)
    const del = await t.req('DELETE', `/api/tokens/${made.id}`, { token: t.adminToken })
    expect(del.status).toBe(200)
    expect(del.body).toEqual({ deleted: true, id: made.id })
    expect((await t.req('GET', '/api/flags', { token: made.token })).status).toBe(401)
    expect((await t.req('DELETE', `/api/tokens/${made.id}`, { token: t.adminToken })).status).toBe(404)
    expect((await t.req('GET', `/api/tokens/${made.id}`, { token: t.adminToken })).status).toBe(404)
  })

  test('tokens outlive their creator', async () => {
    const creator = await t.userWith(['token:write', 'flag:read'])
    const made = await makeToken({ name: 'orphan', permissions: ['flag:read'] }, creator.token)
    expect((await t.req('DELETE', `/api/users/${creator.id}`, { token: t.adminToken })).status).toBe(200)
    expect((await t.req('GET', '/api/flags', { token: made.token })).status).toBe(200)
  })

  test('using a token never writes: lastUsedAt is kept in memory', async () => {
    const made = await makeToken({ name: 'busy', permissions: ['flag:read'] })
    const before = t.app.store.writes
    for (let i = 0; i < 20; i++) await t.req('GET', '/api/flags', { token: made.token })
    expect(t.app.store.writes).toBe(before)
    const shown = await t.req('GET', `/api/tokens/${made.id}`, { token: t.adminToken })
    expect(shown.body.lastUsedAt).toMatch(/Z$/)
  })
})

group('session-only actions', () => {
  test('logout, ending a session and changing a password are refused to a token', async () => {
    const made = await makeToken({ name: 'no-session', permissions: ['flag:read'] })
    const logout = await t.req('POST', '/api/logout', { token: made.token })
    expect(logout.status).toBe(403)
    expect(logout.body.error.code).toBe('FORBIDDEN')
    const sessions = await t.req('GET', '/api/sessions', { token: t.adminToken })
    const sid = sessions.body[0].id as string
    expect((await t.req('DELETE', `/api/sessions/${sid}`, { token: made.token })).status).toBe(403)
    const me = await t.req('GET', '/api/me', { token: t.adminToken })
    const pw = await t.req('PUT', `/api/users/${me.body.id}`, {
      token: made.token,
      body: { password: 'new-password-1', currentPassword: 'admin-password' },
    })
    expect(pw.status).toBe(403)
    expect((await t.req('GET', '/api/me', { token: t.adminToken })).status).toBe(200)
  })
})

group('GET /api/tokens', () => {
  test('lists every token sorted by name in code-point order, and needs token:read', async () => {
    for (const name of ['b', 'B', 'a', 'a b', 'a:b']) await makeToken({ name, permissions: [] })
    const res = await t.req('GET', '/api/tokens', { token: t.adminToken })
    expect(res.status).toBe(200)
    const names = res.body.map((x: { name: string }) => x.name)
    expect(names).toEqual(['B', 'a', 'a b', 'a:b', 'b'])
    const writer = await t.userWith(['token:write'])
    const denied = await t.req('GET', '/api/tokens', { token: writer.token })
    expect(denied.status).toBe(403)
    expect(denied.body.error.details.required).toBe('token:read')
  })
})

group('expiry', () => {
  test("an expired token is refused from the moment it expires, by the services' clock (no wait)", async () => {
    let now = Date.now()
    const clocked = await createTestApp({}, { now: () => new Date(now) })
    try {
      const res = await clocked.req('POST', '/api/tokens', {
        token: clocked.adminToken,
        body: { name: 'soon', permissions: ['flag:read'], expiresAt: new Date(now + 1500).toISOString() },
      })
      const token = res.body.token as string
      expect((await clocked.req('GET', '/api/flags', { token })).status).toBe(200)
      now += 1499 // the credential cache holds its answer, but never past the expiry
      expect((await clocked.req('GET', '/api/flags', { token })).status).toBe(200)
      now += 2
      const refused = await clocked.req('GET', '/api/flags', { token })
      expect(refused.status).toBe(401)
      expect(refused.body.error.message).toContain('expired')
    } finally {
      await clocked.close()
    }
  })
})

group('flagPrefixes', () => {
  let scoped: string
  test('setup: flags inside and outside the prefixes', async () => {
    for (const name of ['mobile/a', 'mobile/b/c', 'checkout/new_flow', 'web/x', 'mobilex']) {
      expect((await t.req('POST', '/api/flags', { token: t.adminToken, body: { name, type: 'BOOLEAN' } })).status).toBe(201)
    }
    const made = await makeToken({
      name: 'mobile team',
      permissions: ['flag:read', 'flag:write', 'migration:read', 'migration:write'],
      flagPrefixes: ['mobile/', 'checkout/', 'mobile/b/'],
    })
    expect((made as unknown as { flagPrefixes: string[] }).flagPrefixes).toEqual(['checkout/', 'mobile/', 'mobile/b/'])
    scoped = made.token
  })

  test('lists show only flags under the prefixes, with ?prefix= narrowing further', async () => {
    const names = async (query = '') =>
      (await t.req('GET', `/api/flags${query}`, { token: scoped })).body.map((f: { name: string }) => f.name)
    expect(await names()).toEqual(['checkout/new_flow', 'mobile/a', 'mobile/b/c'])
    expect(await names('?prefix=mobile/b')).toEqual(['mobile/b/c'])
    expect(await names('?prefix=mob')).toEqual(['mobile/a', 'mobile/b/c'])
    expect(await names('?prefix=web/')).toEqual([])
  })

  test('a flag outside reads exactly like a missing flag', async () => {
    const outside = await t.req('GET', '/api/flags/web/x', { token: scoped })
    const missing = await t.req('GET', '/api/flags/web/none', { token: scoped })
    expect(outside.status).toBe(404)
    expect(outside.body.error.code).toBe('NOT_FOUND')
    expect(outside.body.error.message).toBe('no flag named "web/x"')
    expect(missing.body.error.message).toBe('no flag named "web/none"')
    expect((await t.req('GET', '/api/flags/mobilex', { token: scoped })).status).toBe(404)
    expect((await t.req('GET', '/api/flags/mobile/a', { token: scoped })).status).toBe(200)
  })

  test('writes outside are 403 whether the flag exists or not, and change nothing', async () => {
    const revision = (await t.req('GET', '/api/flags/web/x', { token: t.adminToken })).body.revision
    const attempts: [string, string, unknown][] = [
      ['POST', '/api/flags', { name: 'web/new', type: 'BOOLEAN' }],
      ['PUT', '/api/flags/web/x', { value: true }],
      ['PUT', '/api/flags/web/none', { value: true }],
      ['DELETE', '/api/flags/web/x', undefined],
      ['PUT', '/api/flags/mobile/a', { name: 'web/moved' }], // renaming out of the scope
      ['PUT', '/api/flags/web/x', { name: 'mobile/moved-in' }], // and into it
    ]
    for (const [method, path, body] of attempts) {
      const res = await t.req(method, path, { token: scoped, body })
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.body.error.code).toBe('FORBIDDEN')
    }
    expect((await t.req('GET', '/api/flags/web/x', { token: t.adminToken })).body.revision).toBe(revision)
    expect((await t.req('GET', '/api/flags/web/new', { token: t.adminToken })).status).toBe(404)
    expect((await t.req('GET', '/api/flags/mobile/a', { token: t.adminToken })).status).toBe(200)
  })

  test('writes inside work', async () => {
    expect((await t.req('POST', '/api/flags', { token: scoped, body: { name: 'mobile/new', type: 'INTEGER' } })).status).toBe(201)
    expect((await t.req('PUT', '/api/flags/mobile/new', { token: scoped, body: { value: 3 } })).status).toBe(200)
    expect((await t.req('PUT', '/api/flags/mobile/new', { token: scoped, body: { name: 'checkout/moved' } })).status).toBe(200)
    expect((await t.req('DELETE', '/api/flags/checkout/moved', { token: scoped })).status).toBe(200)
  })

  test('migrations need a token without flagPrefixes', async () => {
    const document = { environment: 'x', version: '1', createdAt: new Date().toISOString(), flags: {} }
    for (const [method, path, body] of [
      ['GET', '/api/migrations/export', undefined],
      ['PUT', '/api/migrations', document],
      ['PATCH', '/api/migrations', { url: 'https://example.com/flags.json' }],
    ] as const) {
      const res = await t.req(method, path, { token: scoped, body })
      expect(res.status, `${method} ${path}`).toBe(403)
      expect(res.body.error.message).toContain('flagPrefixes')
    }
    const unscoped = await makeToken({ name: 'migrator', permissions: ['migration:read'] })
    expect((await t.req('GET', '/api/migrations/export', { token: unscoped.token })).status).toBe(200)
  })

  test('a token creating a token stays inside its prefixes and its expiry', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString()
    const parent = await makeToken({ name: 'parent', permissions: ['token:write', 'flag:read'], flagPrefixes: ['mobile/'], expiresAt })
    const tries: [Record<string, unknown>, number][] = [
      [{ name: 'child-all', permissions: ['flag:read'], expiresAt }, 403],
      [{ name: 'child-web', permissions: ['flag:read'], flagPrefixes: ['web/'], expiresAt }, 403],
      [{ name: 'child-forever', permissions: ['flag:read'], flagPrefixes: ['mobile/'] }, 403],
      [{ name: 'child-narrow', permissions: ['flag:read'], flagPrefixes: ['mobile/b/'], expiresAt }, 201],
    ]
    for (const [body, status] of tries) {
      const res = await t.req('POST', '/api/tokens', { token: parent.token, body })
      expect(res.status, String(body.name)).toBe(status)
    }
    const child = (await t.req('GET', '/api/tokens', { token: t.adminToken })).body.find((x: { name: string }) => x.name === 'child-narrow')
    expect(child.createdBy).toEqual({ type: 'token', id: parent.id, name: 'parent' })
  })
})

group('a token is never stronger through what it makes (hardening)', () => {
  test('a user:write token cannot create or promote a user beyond its own permissions, nor take over a stronger one', async () => {
    const admin = await makeToken({ name: 'users admin', permissions: ['user:write', 'user:read', 'flag:read'] })
    const as = { 'x-api-key': admin.token }
    const post = (body: object) => t.req('POST', '/api/users', { headers: as, body })
    // more than the token holds: 403 naming the permission, nothing created
    const stronger = await post({ username: 'escalated', password: 'password-1', permissions: ['flag:write'] })
    expect(stronger.status).toBe(403)
    expect(stronger.body.error.details.required).toBe('flag:write')
    expect((await t.req('GET', '/api/users', { token: t.adminToken })).body.map((u: { username: string }) => u.username)).not.toContain(
      'escalated',
    )
    // within: fine
    const weaker = await post({ username: 'reader', password: 'password-1', permissions: ['flag:read'] })
    expect(weaker.status).toBe(201)
    // promoting past the token: 403
    const promote = await t.req('PUT', `/api/users/${weaker.body.id}`, { headers: as, body: { permissions: ['flag:read', 'flag:write'] } })
    expect(promote.status).toBe(403)
    // taking over a stronger account (its password): 403
    const adminUser = (await t.req('GET', '/api/users', { token: t.adminToken })).body.find(
      (u: { username: string }) => u.username === 'admin',
    )
    const takeover = await t.req('PUT', `/api/users/${adminUser.id}`, { headers: as, body: { password: 'taken-over-1' } })
    expect(takeover.status).toBe(403)
    expect((await t.req('POST', '/api/login', { body: { username: 'admin', password: 'taken-over-1' } })).status).toBe(401)
  })

  test('a confined or expiring token cannot create users at all (a user is neither)', async () => {
    const confined = await makeToken({ name: 'confined users', permissions: ['user:write'], flagPrefixes: ['mobile/'] })
    const expiring = await makeToken({
      name: 'expiring users',
      permissions: ['user:write'],
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    })
    for (const key of [confined.token, expiring.token]) {
      const res = await t.req('POST', '/api/users', {
        headers: { 'x-api-key': key },
        body: { username: `u${key.slice(-6)}`, password: 'password-1' },
      })
      expect(res.status).toBe(403)
    }
  })

  test('revoking a token revokes the tokens it created, and theirs', async () => {
    const leaked = await makeToken({ name: 'leaked', permissions: ['token:write', 'flag:read'] })
    const child = await makeToken({ name: 'child', permissions: ['token:write', 'flag:read'] }, leaked.token)
    const grandchild = await makeToken({ name: 'grandchild', permissions: ['flag:read'] }, child.token)
    const unrelated = await makeToken({ name: 'unrelated', permissions: ['flag:read'] })
    expect((await t.req('DELETE', `/api/tokens/${leaked.id}`, { token: t.adminToken })).status).toBe(200)
    for (const gone of [leaked, child, grandchild])
      expect((await t.req('GET', '/api/me', { headers: { 'x-api-key': gone.token } })).status).toBe(401)
    expect((await t.req('GET', '/api/me', { headers: { 'x-api-key': unrelated.token } })).status).toBe(200)
    const audit = await t.req('GET', '/api/audit?action=token.deleted', { token: t.adminToken })
    expect(audit.body.map((e: { target: { name: string } }) => e.target.name)).toEqual(
      expect.arrayContaining(['leaked', 'child', 'grandchild']),
    )
  })

  test('a confined token with token:write revokes only tokens it could have created', async () => {
    const scoped = await makeToken({ name: 'scoped revoker', permissions: ['token:write', 'flag:read'], flagPrefixes: ['mobile/'] })
    const wide = await makeToken({ name: 'wide', permissions: ['flag:read'] })
    const inside = await makeToken({ name: 'inside', permissions: ['flag:read'], flagPrefixes: ['mobile/ios/'] })
    const stronger = await makeToken({ name: 'stronger inside', permissions: ['flag:write'], flagPrefixes: ['mobile/'] })
    const as = { 'x-api-key': scoped.token }
    expect((await t.req('DELETE', `/api/tokens/${wide.id}`, { headers: as })).status).toBe(403)
    expect((await t.req('DELETE', `/api/tokens/${stronger.id}`, { headers: as })).status).toBe(403)
    expect((await t.req('GET', '/api/me', { headers: { 'x-api-key': wide.token } })).status).toBe(200)
    expect((await t.req('DELETE', `/api/tokens/${inside.id}`, { headers: as })).status).toBe(200)
  })
})

group('flagPrefixes mean groups or whole names (hardening)', () => {
  test('["storefront"] covers storefront/… but never storefrontx/…, in reads, lists and evaluations', async () => {
    for (const name of ['storefront/a', 'storefrontx/leak'])
      expect((await t.req('POST', '/api/flags', { token: t.adminToken, body: { name, type: 'BOOLEAN', value: true } })).status).toBe(201)
    const scoped = await makeToken({ name: 'storefront only', permissions: ['flag:read', 'flag:evaluate'], flagPrefixes: ['storefront'] })
    const as = { 'x-api-key': scoped.token }
    expect((await t.req('GET', '/api/flags/storefront/a', { headers: as })).status).toBe(200)
    expect((await t.req('GET', '/api/flags/storefrontx/leak', { headers: as })).status).toBe(404)
    const list = await t.req('GET', '/api/flags', { headers: as })
    expect(list.body.map((f: { name: string }) => f.name)).toEqual(['storefront/a'])
    const bulk = await t.req('POST', '/ofrep/v1/evaluate/flags', { headers: as, body: {} })
    expect(bulk.body.flags.map((f: { key: string }) => f.key)).toEqual(['storefront/a'])
    const one = await t.req('POST', '/ofrep/v1/evaluate/flags/storefrontx/leak', { headers: as, body: {} })
    expect(one.status).toBe(404)
  })

  test('a prefix no flag could ever match is refused, naming it', async () => {
    for (const prefix of ['__proto__/', 'mobile/../', 'a//b/', '.hidden/']) {
      const res = await t.req('POST', '/api/tokens', {
        token: t.adminToken,
        body: { name: `bad ${prefix.length}${prefix.charCodeAt(0)}`, permissions: [], flagPrefixes: [prefix] },
      })
      expect(res.status, prefix).toBe(400)
      expect(res.body.error.details.field).toBe('flagPrefixes.0')
    }
  })
})
