/**
 * Single sign-on (docs/single-sign-on.md) against a real OpenID provider on 127.0.0.1: the whole
 * flow over HTTP (start, the provider's pages, callback, the one-time code), the user it makes
 * (source oidc, permissions and prefixes from groups, recomputed at every sign-in), and each
 * failure ending on the sign-in page with a sentence.
 */

import { afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { eventually } from '../helpers/eventually.ts'
import { type Account, startProvider, type TestProvider } from '../helpers/oidc-provider.ts'
import { type Misdeed, startRogueProvider } from '../helpers/rogue-provider.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

setDefaultTimeout(30_000)
const CALLBACK = 'http://localhost/api/auth/oidc/callback'
let apps: TestApp[] = []
let providers: TestProvider[] = []
afterEach(async () => {
  for (const a of apps) await a.close()
  for (const p of providers) await p.stop()
  apps = []
  providers = []
})

const people: Account[] = [
  { sub: 'u-ada', preferred_username: 'ada', email: 'ada@example.test', groups: ['mobile-team'] },
  // group names that are also the names of every object's built-in properties
  ...['constructor', '__proto__', 'toString', 'hasOwnProperty'].map((g) => ({
    sub: `u-${g}`,
    preferred_username: `m${g.replace(/_/g, '')}`,
    groups: ['mobile-team', g],
  })),
  { sub: 'u-bob', preferred_username: 'bob', groups: ['admins', 'mobile-team'] },
  { sub: 'u-eve', email: 'eve@example.test' },
  { sub: 'u-root', preferred_username: 'admin' },
  { sub: 'u-anon' },
]

async function setUp(settings: Record<string, unknown> = {}, env: Record<string, string> = {}) {
  const provider = await startProvider([CALLBACK], people)
  providers.push(provider)
  const oidc = {
    issuer: provider.issuer,
    clientId: provider.clientId,
    clientSecret: provider.clientSecret,
    scopes: 'openid profile email groups',
    groupPermissions: {
      'mobile-team': { permissions: ['flag:read', 'flag:write'], flagPrefixes: ['mobile/'] },
      admins: ['flag:read', 'flag:write', 'user:read'],
    },
    label: 'Sign in with Example',
    redirectUri: CALLBACK,
    ...settings,
  }
  const a = await createTestApp({ FLAGD_AUTH_OIDC: JSON.stringify(oidc), ...env })
  apps.push(a)
  return { a, provider }
}

/** The browser's way through: start, the provider, the callback; answers where the callback sent it, and the browser's cookie. */
async function browse(a: TestApp, provider: TestProvider, login: string, tamper?: (callback: URL) => URL) {
  const start = await a.req('GET', '/api/auth/oidc/start')
  expect(start.status).toBe(302)
  const cookie = (start.headers.get('set-cookie') as string).split(';')[0] as string
  const location = start.headers.get('location') as string
  if (location.startsWith('/ui/')) return { location, cookie }
  let back = await provider.signIn(location, login)
  if (tamper) back = tamper(back)
  const callback = await a.req('GET', `${back.pathname}${back.search}`, { headers: { cookie } })
  expect(callback.status).toBe(302)
  return { location: callback.headers.get('location') as string, cookie }
}

/** Where the callback sent the browser. */
const signIn = async (a: TestApp, provider: TestProvider, login: string, tamper?: (callback: URL) => URL) =>
  (await browse(a, provider, login, tamper)).location

/** A whole sign-in in one browser: the session exchange carries the cookie `start` set. */
async function sessionOf(a: TestApp, provider: TestProvider, login: string) {
  const { location, cookie } = await browse(a, provider, login)
  return a.req('POST', '/api/auth/oidc/session', { body: { code: codeOf(location) }, headers: { cookie } })
}

const codeOf = (location: string) => /#oidc-code=(.+)$/.exec(location)?.[1]
const errorOf = (location: string) => decodeURIComponent(/#oidc-error=(.+)$/.exec(location)?.[1] ?? '')

test('a person signs in through the provider and becomes a user of source oidc, confined as their groups say', async () => {
  const { a, provider } = await setUp()
  expect((await a.req('GET', '/api/auth/oidc')).body).toEqual({ enabled: true, label: 'Sign in with Example' })
  // discovery starts with the daemon and is never waited for: /health says ok once it is done
  const health = await eventually(async () => {
    const oidc = (await a.req('GET', '/health')).body.oidc
    return oidc.status !== 'unavailable' && oidc
  })
  expect(health).toMatchObject({ status: 'ok', issuer: provider.issuer })
  const { location, cookie } = await browse(a, provider, 'u-ada')
  const code = codeOf(location)
  expect(code, location).toBeDefined()
  const session = await a.req('POST', '/api/auth/oidc/session', { body: { code }, headers: { cookie } })
  expect(session.status).toBe(200)
  expect(session.body.user).toMatchObject({ username: 'ada', permissions: ['flag:read', 'flag:write'] })
  const me = await a.req('GET', '/api/me', { token: session.body.token })
  expect(me.body).toMatchObject({ username: 'ada', source: 'oidc', flagPrefixes: ['mobile/'] })
  // the code works once
  expect((await a.req('POST', '/api/auth/oidc/session', { body: { code }, headers: { cookie } })).status).toBe(401)
  // such a person has no password here
  expect((await a.req('POST', '/api/login', { body: { username: 'ada', password: 'anything-at-all' } })).status).toBe(401)
  // and the provider's own tokens are nobody's credential
  expect((await a.req('GET', '/api/flags', { token: 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ1LWFkYSJ9.c2ln' })).status).toBe(401)
})

test('permissions come from the groups at every sign-in; one unconfined group unconfines; matched by subject, not name', async () => {
  const { a, provider } = await setUp()
  const first = await sessionOf(a, provider, 'u-bob')
  expect(first.body.user.permissions).toEqual(['flag:read', 'flag:write', 'user:read'])
  const bob = (await a.req('GET', '/api/me', { token: first.body.token })).body
  expect(bob).toMatchObject({ source: 'oidc', flagPrefixes: [] })
  // an admin's change is replaced at the next sign-in
  expect((await a.req('PUT', `/api/users/${bob.id}`, { token: a.adminToken, body: { permissions: ['flag:read'] } })).status).toBe(200)
  const again = await sessionOf(a, provider, 'u-bob')
  expect(again.body.user).toMatchObject({ id: bob.id, permissions: ['flag:read', 'flag:write', 'user:read'] })
  const users = (await a.req('GET', '/api/users', { token: a.adminToken })).body as { username: string; source: string }[]
  expect(users.filter((u) => u.username === 'bob')).toEqual([expect.objectContaining({ source: 'oidc' })])
})

test('a group named like a built-in property of objects (constructor, __proto__, toString, hasOwnProperty) grants nothing and unconfines no one', async () => {
  const { a, provider } = await setUp()
  for (const group of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
    const session = await sessionOf(a, provider, `u-${group}`)
    expect(session.status, group).toBe(200)
    const me = (await a.req('GET', '/api/me', { token: session.body.token })).body
    expect(me, group).toMatchObject({ source: 'oidc', permissions: ['flag:read', 'flag:write'], flagPrefixes: ['mobile/'] })
  }
})

test('a sign-in code signs in only the browser that started the sign-in (login CSRF)', async () => {
  const { a, provider } = await setUp()
  // the attacker signs in to their own account, and sends the code to someone else's browser
  const attacker = await browse(a, provider, 'u-ada')
  const code = codeOf(attacker.location)
  expect(code).toBeDefined()
  const victimsOwn = ((await a.req('GET', '/api/auth/oidc/start')).headers.get('set-cookie') as string).split(';')[0] as string
  const browsers: Record<string, string>[] = [{}, { cookie: victimsOwn }, { cookie: 'flagd_oidc=forged.cookie' }]
  for (const headers of browsers) {
    const refused = await a.req('POST', '/api/auth/oidc/session', { body: { code }, headers })
    expect(refused.status, JSON.stringify(headers)).toBe(401)
    expect(refused.body.error.message).toContain('another browser')
  }
  // in the browser that started it, the code still works, once; the cookie is cleared
  const own = await a.req('POST', '/api/auth/oidc/session', { body: { code }, headers: { cookie: attacker.cookie } })
  expect(own.status).toBe(200)
  expect(own.headers.get('set-cookie')).toContain('flagd_oidc=;')
  expect((await a.req('POST', '/api/auth/oidc/session', { body: { code }, headers: { cookie: attacker.cookie } })).status).toBe(401)
})

test('the redirect URI comes from the configuration, never from the Host a request names', async () => {
  const redirectOf = async (a: TestApp) => {
    const start = await a.req('GET', '/api/auth/oidc/start', { host: 'evil.example', headers: { host: 'evil.example' } })
    return new URL(start.headers.get('location') as string).searchParams.get('redirect_uri')
  }
  const { a, provider } = await setUp()
  expect(await redirectOf(a)).toBe(CALLBACK)
  // without redirectUri: the address flagd is configured to listen on
  const { a: b } = await setUp({ redirectUri: undefined }, { FLAGD_HOST: '127.0.0.1', FLAGD_PORT: '18080' })
  expect(await redirectOf(b)).toBe('http://127.0.0.1:18080/api/auth/oidc/callback')
  const { a: c } = await setUp({ redirectUri: undefined }, { FLAGD_HOST: '::1', FLAGD_PORT: '18081' })
  expect(await redirectOf(c)).toBe('http://[::1]:18081/api/auth/oidc/callback')
  expect(provider.issuer).toBeDefined()
})

test('a redirectUri that is no http(s) address without query or fragment stops start-up naming the key', async () => {
  const provider = await startProvider([CALLBACK], people)
  providers.push(provider)
  for (const redirectUri of [
    'ftp://flags.example/api/auth/oidc/callback',
    'https://flags.example/cb#x',
    'https://flags.example/cb?x=1',
    'not a url',
    42,
  ]) {
    const oidc = { issuer: provider.issuer, clientId: 'flagd', clientSecret: 'secret', redirectUri }
    const made = createTestApp({ FLAGD_AUTH_OIDC: JSON.stringify(oidc) })
    await expect(made, String(redirectUri)).rejects.toThrow('auth.oidc redirectUri must be')
  }
})

test('with a wildcard listen address and no redirectUri, SSO is misconfigured: /health names auth.oidc.redirectUri, passwords still work', async () => {
  const listens: Record<string, string>[] = [{ FLAGD_HOST: '0.0.0.0' }, { FLAGD_HOST: '::' }, { FLAGD_HOST: '127.0.0.1', FLAGD_PORT: '0' }]
  for (const listen of listens) {
    const host = JSON.stringify(listen)
    const { a } = await setUp({ redirectUri: undefined }, listen)
    const health = await a.req('GET', '/health')
    expect(health.status, host).toBe(200)
    expect(health.body.oidc, host).toMatchObject({ status: 'misconfigured', reason: expect.stringContaining('auth.oidc.redirectUri') })
    const start = await a.req('GET', '/api/auth/oidc/start')
    expect(errorOf(start.headers.get('location') as string), host).toContain('misconfigured')
    expect((await a.req('POST', '/api/login', { body: { username: 'admin', password: 'admin-password' } })).status).toBe(200)
  }
})

test('every failure ends on the sign-in page with a sentence, and changes nothing', async () => {
  const { a, provider } = await setUp()
  // a username another user holds (the local admin)
  expect(errorOf(await signIn(a, provider, 'u-root'))).toContain('belongs to another flagd user')
  // no preferred_username: the email is the username
  expect(codeOf(await signIn(a, provider, 'u-eve'))).toBeDefined()
  // an answer that does not belong to this sign-in
  const tampered = (u: URL) => {
    u.searchParams.set('state', 'not-the-state')
    return u
  }
  expect(errorOf(await signIn(a, provider, 'u-ada', tampered))).toContain('state')
  // the flow cookie missing: not started here
  const back = await provider.signIn((await a.req('GET', '/api/auth/oidc/start')).headers.get('location') as string, 'u-ada')
  const noCookie = await a.req('GET', `${back.pathname}${back.search}`)
  expect(errorOf(noCookie.headers.get('location') as string)).toContain('not started here')
  // no username claim at all
  expect(errorOf(await signIn(a, provider, 'u-anon'))).toContain('did not send your username')
  // the provider's code used twice (a replay of the callback)
  const again = await a.req('GET', '/api/auth/oidc/start')
  const flowCookie = (again.headers.get('set-cookie') as string).split(';')[0] as string
  const returned = await provider.signIn(again.headers.get('location') as string, 'u-ada')
  const once = await a.req('GET', `${returned.pathname}${returned.search}`, { headers: { cookie: flowCookie } })
  expect(codeOf(once.headers.get('location') as string)).toBeDefined()
  const twice = await a.req('GET', `${returned.pathname}${returned.search}`, { headers: { cookie: flowCookie } })
  expect(errorOf(twice.headers.get('location') as string)).toContain('already used')
  // the provider's refusal
  const refused = await a.req('GET', '/api/auth/oidc/callback?error=access_denied&state=x')
  expect(errorOf(refused.headers.get('location') as string)).toContain('refused')
  expect((await a.req('GET', '/api/users', { token: a.adminToken })).body.map((u: { username: string }) => u.username).sort()).toEqual([
    'ada',
    'admin',
    'eve@example.test',
  ])
})

test('a provider that cannot be reached never stops the daemon: /health says so, passwords still work', async () => {
  const a = await createTestApp({
    FLAGD_AUTH_OIDC: JSON.stringify({ issuer: 'http://127.0.0.1:9/nowhere', clientId: 'x', clientSecret: 'y' }),
  })
  apps.push(a)
  const start = await a.req('GET', '/api/auth/oidc/start')
  expect(errorOf(start.headers.get('location') as string)).toContain('cannot be reached')
  const health = await a.req('GET', '/health')
  expect(health.status).toBe(200)
  expect(health.body.oidc).toMatchObject({ status: 'unavailable', reason: expect.stringContaining('discovery') })
  expect((await a.req('GET', '/api/flags', { token: a.adminToken })).status).toBe(200)
})

test('an ID token signed with an unpublished key, issued for another client, or expired ends with its sentence', async () => {
  const rogue = await startRogueProvider('flagd')
  try {
    const a = await createTestApp({ FLAGD_AUTH_OIDC: JSON.stringify({ issuer: rogue.issuer, clientId: 'flagd', clientSecret: 'secret' }) })
    apps.push(a)
    const cases: [Misdeed, string][] = [
      ['foreign-key', 'signature could not be verified'],
      ['other-audience', 'another application'],
      ['expired', 'has expired'],
      ['other-issuer', 'another identity provider'],
      ['endless-userinfo', 'too large'],
    ]
    for (const [misdeed, sentence] of cases) {
      rogue.misdeed = misdeed
      const start = await a.req('GET', '/api/auth/oidc/start')
      const cookie = (start.headers.get('set-cookie') as string).split(';')[0] as string
      const authorization = new URL(start.headers.get('location') as string)
      rogue.nonce = authorization.searchParams.get('nonce') as string
      const state = authorization.searchParams.get('state') as string
      const back = await a.req('GET', `/api/auth/oidc/callback?code=some-code&state=${state}`, { headers: { cookie } })
      expect(errorOf(back.headers.get('location') as string), misdeed).toContain(sentence)
    }
    expect((await a.req('GET', '/api/users', { token: a.adminToken })).body).toHaveLength(1)
  } finally {
    rogue.stop()
  }
})
