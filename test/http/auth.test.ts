/** docs/api.md#authentication: login, tokens, throttling, revocation, logout, /api/me, restart. */

import { expect, test } from 'bun:test'
import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { SignJWT } from 'jose'
import { ADMIN, createTestApp, scenarioGroup, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
const group = scenarioGroup(
  async () => {
    t = await createTestApp({ FLAGD_TRUST_PROXY: '10.9.9.9' })
  },
  () => t.close(),
)

const decode = (part: string) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))

group('login', () => {
  test('answers token, user and expiresAt', async () => {
    const res = await t.req('POST', '/api/login', { body: ADMIN })
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(['expiresAt', 'token', 'user'])
    expect(Object.keys(res.body.user).sort()).toEqual(['id', 'permissions', 'username'])
    expect(res.body.user.username).toBe('admin')
    expect(res.body.expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })

  test('the token is HS256 with sub, sid, iat, exp and a 12 h lifetime', async () => {
    const res = await t.req('POST', '/api/login', { body: ADMIN })
    const [header, payload] = res.body.token.split('.')
    expect(decode(header).alg).toBe('HS256')
    const claims = decode(payload)
    expect(claims.sub).toBe(res.body.user.id)
    expect(typeof claims.sid).toBe('string')
    expect(claims.exp - claims.iat).toBe(12 * 3600)
    expect(new Date(claims.exp * 1000).toISOString().slice(0, 19)).toBe(res.body.expiresAt.slice(0, 19))
  })

  test('bad password and unknown user get the same 401', async () => {
    const a = await t.req('POST', '/api/login', { body: { username: 'admin', password: 'wrong-password' }, peer: '10.0.0.1' })
    const b = await t.req('POST', '/api/login', { body: { username: 'nobody', password: 'wrong-password' }, peer: '10.0.0.1' })
    expect(a.status).toBe(401)
    expect(b.status).toBe(401)
    expect(a.body).toEqual(b.body)
    expect(a.headers.get('www-authenticate')).toBe('Bearer')
  })

  test('username matching ignores case', async () => {
    const res = await t.req('POST', '/api/login', { body: { username: 'ADMIN', password: ADMIN.password } })
    expect(res.status).toBe(200)
  })

  test.each([
    [{ password: 'x' }, 'username'],
    [{ username: 'x' }, 'password'],
    [{ username: '', password: 'x' }, 'username'],
  ])('missing field %j is 400', async (body, field) => {
    const res = await t.req('POST', '/api/login', { body })
    expect(res.status).toBe(400)
    expect(res.body.error.details.field).toBe(field)
  })

  test('the secret file is 0600 and never in an answer', async () => {
    const path = join(t.dataDir, 'jwt-secret')
    expect(statSync(path).mode & 0o777).toBe(0o600)
    const secret = readFileSync(path, 'utf8').trim()
    const res = await t.req('GET', '/api/openapi.json')
    expect(res.text).not.toContain(secret)
  })
})

group('throttling', () => {
  test('the 6th failure for a username from one address is 429 with Retry-After, the right password too', async () => {
    const user = await t.userWith([], 'throttled')
    for (let i = 0; i < 5; i++) {
      const res = await t.req('POST', '/api/login', { body: { username: 'throttled', password: 'wrong-password' }, peer: '10.1.0.1' })
      expect(res.status).toBe(401)
    }
    const sixth = await t.req('POST', '/api/login', { body: { username: 'THROTTLED', password: 'wrong-password' }, peer: '10.1.0.1' })
    expect(sixth.status).toBe(429)
    expect(sixth.body.error.code).toBe('TOO_MANY_REQUESTS')
    const retry = Number(sixth.headers.get('retry-after'))
    expect(retry).toBeGreaterThan(800)
    expect(retry).toBeLessThanOrEqual(900)
    const right = await t.req('POST', '/api/login', { body: { username: 'throttled', password: user.password }, peer: '10.1.0.1' })
    expect(right.status).toBe(429)
    // a stranger's failures do not lock the owner out at the owner's own address
    const owner = await t.req('POST', '/api/login', { body: { username: 'throttled', password: user.password }, peer: '10.1.0.2' })
    expect(owner.status).toBe(200)
  })

  test('of 200 simultaneous guesses from one address, at most 5 are checked: the right one (number 150) gets no token', async () => {
    const user = await t.userWith([], 'burst')
    const guesses = Array.from({ length: 200 }, (_, i) => (i === 149 ? user.password : `wrong-password-${i}`))
    const answers = await Promise.all(
      guesses.map((password) => t.req('POST', '/api/login', { body: { username: 'burst', password }, peer: '10.5.0.1' })),
    )
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(5)
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(195)
    expect(statuses[149]).toBe(429)
  })

  test('16 simultaneous correct logins from one address all succeed: scripts are never slowed into 429', async () => {
    const user = await t.userWith([], 'busy-script')
    const answers = await Promise.all(
      Array.from({ length: 16 }, () =>
        t.req('POST', '/api/login', { body: { username: 'busy-script', password: user.password }, peer: '10.12.0.1' }),
      ),
    )
    expect(answers.map((a) => a.status)).toEqual(Array(16).fill(200))
  })

  test('a success resets that username-and-address count', async () => {
    const user = await t.userWith([], 'resets')
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 4; i++) {
        const res = await t.req('POST', '/api/login', { body: { username: 'resets', password: 'wrong-password' }, peer: '10.2.0.1' })
        expect(res.status).toBe(401)
      }
      const ok = await t.req('POST', '/api/login', { body: { username: 'resets', password: user.password }, peer: '10.2.0.1' })
      expect(ok.status).toBe(200)
    }
  })

  test('setting the password clears the counts', async () => {
    const user = await t.userWith([], 'reset-clears')
    for (let i = 0; i < 5; i++)
      await t.req('POST', '/api/login', { body: { username: 'reset-clears', password: 'wrong-password' }, peer: '10.6.0.1' })
    expect(
      (await t.req('POST', '/api/login', { body: { username: 'reset-clears', password: user.password }, peer: '10.6.0.1' })).status,
    ).toBe(429)
    expect((await t.req('PUT', `/api/users/${user.id}`, { token: t.adminToken, body: { password: 'brand-new-password' } })).status).toBe(
      200,
    )
    expect(
      (await t.req('POST', '/api/login', { body: { username: 'reset-clears', password: 'brand-new-password' }, peer: '10.6.0.1' })).status,
    ).toBe(200)
  })

  test('an over-long username or password is a bad credential, not counted', async () => {
    const user = await t.userWith([], 'longpw')
    for (const body of [
      { username: 'x'.repeat(65), password: 'whatever-pw' },
      { username: 'longpw', password: 'p'.repeat(1025) },
      { username: 'u'.repeat(1_000_000), password: 'p' },
    ]) {
      const res = await t.req('POST', '/api/login', { body, peer: '10.7.0.1' })
      expect(res.status).toBe(401)
    }
    for (let i = 0; i < 10; i++)
      await t.req('POST', '/api/login', { body: { username: 'longpw', password: 'p'.repeat(2000) }, peer: '10.7.0.1' })
    expect((await t.req('POST', '/api/login', { body: { username: 'longpw', password: user.password }, peer: '10.7.0.1' })).status).toBe(
      200,
    )
  })

  test('a flood of 1 MB passwords is refused without being read; the admin still logs in', async () => {
    const big = JSON.stringify({ username: 'admin', password: 'p'.repeat(1_000_000) })
    const flood = Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        t.req('POST', '/api/login', {
          rawBody: big,
          headers: { 'content-type': 'application/json', 'content-length': String(big.length) },
          peer: `10.11.${i}.1`,
        }),
      ),
    )
    const admin = await t.req('POST', '/api/login', { body: ADMIN, peer: '10.11.255.1' })
    expect(admin.status).toBe(200)
    expect((await flood).every((r) => r.status === 401)).toBe(true)
    // a body over the 1 MiB limit is still 413, as on every route
    const huge = JSON.stringify({ username: 'admin', password: 'p'.repeat(1_100_000) })
    expect(
      (
        await t.req('POST', '/api/login', {
          rawBody: huge,
          headers: { 'content-type': 'application/json', 'content-length': String(huge.length) },
        })
      ).status,
    ).toBe(413)
  })

  test('a login that verified the old password while a reset was made gets no lasting session (40 races)', async () => {
    const user = await t.userWith([], 'racer')
    let password = user.password
    let refused = 0
    for (let i = 0; i < 40; i++) {
      const next = `new-password-${i}`
      const [login, reset] = await Promise.all([
        t.req('POST', '/api/login', { body: { username: 'racer', password }, peer: `10.8.${i}.1` }),
        t.req('PUT', `/api/users/${user.id}`, { token: t.adminToken, body: { password: next } }),
      ])
      expect(reset.status).toBe(200)
      if (login.status === 200) expect((await t.req('GET', '/api/me', { token: login.body.token })).status).toBe(401)
      else {
        expect(login.status).toBe(401)
        refused++
      }
      password = next
    }
    expect(refused).toBeGreaterThan(0) // the race really happened
  })

  test('the 21st failure from one address within a minute is 429; other addresses are not affected', async () => {
    for (let i = 0; i < 20; i++) {
      const res = await t.req('POST', '/api/login', { body: { username: `ghost${i}`, password: 'wrong-password' }, peer: '10.3.0.1' })
      expect(res.status).toBe(401)
    }
    const blocked = await t.req('POST', '/api/login', { body: { username: 'ghost-x', password: 'wrong-password' }, peer: '10.3.0.1' })
    expect(blocked.status).toBe(429)
    expect(Number(blocked.headers.get('retry-after'))).toBeLessThanOrEqual(60)
    const other = await t.req('POST', '/api/login', { body: ADMIN, peer: '10.3.0.2' })
    expect(other.status).toBe(200)
  })

  test('behind a trusted proxy a client cannot choose its own address: 30 guesses with forged hops are throttled', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 30; i++) {
      // nginx appends the address it received from to whatever the client sent
      const res = await t.req('POST', '/api/login', {
        body: { username: 'admin', password: 'wrong-password' },
        peer: '10.9.9.9',
        headers: { 'x-forwarded-for': `192.0.2.${i}, 203.0.113.77` },
      })
      statuses.push(res.status)
    }
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401])
    expect(statuses.slice(5).every((s) => s === 429)).toBe(true)
  })

  test('X-Forwarded-For counts only from a trusted proxy', async () => {
    for (let i = 0; i < 20; i++) {
      await t.req('POST', '/api/login', {
        body: { username: `xff${i}`, password: 'wrong-password' },
        peer: '10.9.9.9',
        headers: { 'x-forwarded-for': '192.0.2.7, 10.9.9.9' },
      })
    }
    const viaProxy = await t.req('POST', '/api/login', { body: ADMIN, peer: '10.9.9.9', headers: { 'x-forwarded-for': '192.0.2.7' } })
    expect(viaProxy.status).toBe(429)
    const otherClient = await t.req('POST', '/api/login', { body: ADMIN, peer: '10.9.9.9', headers: { 'x-forwarded-for': '192.0.2.8' } })
    expect(otherClient.status).toBe(200)
    const untrusted = await t.req('POST', '/api/login', { body: ADMIN, peer: '10.4.4.4', headers: { 'x-forwarded-for': '192.0.2.7' } })
    expect(untrusted.status).toBe(200)
  })
})

group('tokens', () => {
  const secretOf = () => new TextEncoder().encode(readFileSync(join(t.dataDir, 'jwt-secret'), 'utf8').trim())

  test.each([
    ['no header', undefined],
    ['garbage', 'Bearer garbage'],
    ['wrong scheme', `Basic YWRtaW46YWRtaW4=`],
    ['empty bearer', 'Bearer '],
  ])('%s → 401', async (_name, header) => {
    const res = await t.req('GET', '/api/me', { headers: header ? { authorization: header } : {} })
    expect(res.status).toBe(401)
    expect(res.body.error.code).toBe('UNAUTHORIZED')
  })

  test('alg "none" is rejected', async () => {
    const [, payload] = t.adminToken.split('.')
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')
    const res = await t.req('GET', '/api/me', { token: `${header}.${payload}.` })
    expect(res.status).toBe(401)
  })

  test('a token from another issuer (other secret) is rejected', async () => {
    const claims = decode(t.adminToken.split('.')[1] as string)
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .sign(new TextEncoder().encode('another-secret-another-secret-123'))
    expect((await t.req('GET', '/api/me', { token: forged })).status).toBe(401)
  })

  test('HS512 with the right secret is still rejected (algorithm pinned)', async () => {
    const claims = decode(t.adminToken.split('.')[1] as string)
    const other = await new SignJWT(claims).setProtectedHeader({ alg: 'HS512' }).sign(secretOf())
    expect((await t.req('GET', '/api/me', { token: other })).status).toBe(401)
  })

  test('an expired token is rejected', async () => {
    const claims = decode(t.adminToken.split('.')[1] as string)
    const expired = await new SignJWT({ ...claims, exp: Math.floor(Date.now() / 1000) - 10 })
      .setProtectedHeader({ alg: 'HS256' })
      .sign(secretOf())
    expect((await t.req('GET', '/api/me', { token: expired })).status).toBe(401)
  })

  test('a validly signed token for a session that does not exist is rejected', async () => {
    const claims = decode(t.adminToken.split('.')[1] as string)
    const made = await new SignJWT({ ...claims, sid: 'ses_made_up' }).setProtectedHeader({ alg: 'HS256' }).sign(secretOf())
    expect((await t.req('GET', '/api/me', { token: made })).status).toBe(401)
  })
})

group('me and logout', () => {
  test('GET /api/me needs no permission', async () => {
    const u = await t.userWith([])
    const res = await t.req('GET', '/api/me', { token: u.token })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ id: u.id, username: u.username, permissions: [] })
    expect(res.body.passwordHash).toBeUndefined()
  })

  test('logout ends only the caller session, from the next request on', async () => {
    const u = await t.userWith([])
    const second = await t.login(u.username, u.password)
    const res = await t.req('POST', '/api/logout', { token: u.token })
    expect(res.status).toBe(200)
    const sid = decode(u.token.split('.')[1] as string).sid
    expect(res.body).toEqual({ deleted: true, id: sid })
    expect((await t.req('GET', '/api/me', { token: u.token })).status).toBe(401)
    expect((await t.req('GET', '/api/me', { token: second })).status).toBe(200)
  })
})

test('sessions and their tokens survive a restart', async () => {
  const app = await createTestApp()
  const token = app.adminToken
  const again = await app.restart()
  try {
    expect((await again.req('GET', '/api/me', { token })).status).toBe(200)
  } finally {
    await again.close()
  }
})

test('production hashes are argon2id at OWASP cost or above', async () => {
  const { createPasswordHasher } = await import('../../src/services/password-hasher.ts')
  const hash = await createPasswordHasher().hash('some password')
  expect(hash).toMatch(/^\$argon2id\$v=19\$m=(\d+),t=(\d+)/)
  const [, m, tt] = /m=(\d+),t=(\d+)/.exec(hash) as RegExpExecArray
  expect(Number(m)).toBeGreaterThanOrEqual(19456)
  expect(Number(tt)).toBeGreaterThanOrEqual(2)
})
