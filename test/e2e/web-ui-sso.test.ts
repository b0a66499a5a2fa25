/**
 * docs/single-sign-on.md in Chromium: a person signs in through a real OpenID provider (on
 * 127.0.0.1) with the button the configuration names, lands in the UI signed in as flagd's own
 * user, sees only the flags their group confines them to, and signs out; a refused sign-in ends on
 * the sign-in page with a sentence, and so does a code that another browser's sign-in produced.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import type { Browser } from 'puppeteer-core'
import { type Daemon, freePort, startDaemon } from '../helpers/daemon.ts'
import { startProvider, type TestProvider } from '../helpers/oidc-provider.ts'
import { isolatedBrowser } from '../helpers/shared-chromium.ts'
import { tempDir } from '../helpers/test-app.ts'
import { bodyText, clickButton, findChromium, waitForText } from '../helpers/ui-driver.ts'

setDefaultTimeout(60_000)
const chromium = findChromium()
let provider: TestProvider | undefined
let d: Daemon | undefined
let browser: Browser | undefined
const cwd = tempDir()

beforeAll(async () => {
  if (!chromium) return
  const providerPort = freePort()
  const daemonPort = freePort()
  const oidc = {
    issuer: `http://127.0.0.1:${providerPort}`,
    clientId: 'flagd',
    clientSecret: 'flagd-test-client-secret',
    scopes: 'openid profile email groups',
    groupPermissions: { 'mobile-team': { permissions: ['flag:read', 'flag:write'], flagPrefixes: ['mobile/'] } },
    label: 'Sign in with Example',
  }
  d = await startDaemon(cwd, ['--port', String(daemonPort)], {
    FLAGD_ADMIN_USERNAME: 'admin',
    FLAGD_ADMIN_PASSWORD: 'admin-password',
    FLAGD_AUTH_OIDC: JSON.stringify(oidc),
  })
  provider = await startProvider(
    [`${d.url}/api/auth/oidc/callback`],
    [{ sub: 'u-ada', preferred_username: 'ada', groups: ['mobile-team'] }],
    providerPort,
  )
  const login = await fetch(`${d.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'admin-password' }),
  })
  const token = ((await login.json()) as { token: string }).token
  for (const name of ['mobile/dark_mode', 'web/banner'])
    await fetch(`${d.url}/api/flags`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, type: 'BOOLEAN', value: true }),
    })
  browser = await isolatedBrowser(chromium)
})

afterAll(async () => {
  await browser?.close()
  d?.proc.kill('SIGTERM')
  await d?.proc.exited
  await provider?.stop()
  rmSync(cwd, { recursive: true, force: true })
})

test.skipIf(!chromium)('a person signs in through the identity provider, sees only their flags, and signs out', async () => {
  const p = await (browser as Browser).newPage()
  try {
    await p.goto(`${(d as Daemon).url}/ui/`)
    await clickButton(p, 'Sign in with Example')
    // the provider's own sign-in page, then its consent page
    await p.waitForSelector('input[name="login"]')
    await p.type('input[name="login"]', 'u-ada')
    await p.type('input[name="password"]', 'anything')
    await Promise.all([p.waitForNavigation(), p.click('button[type="submit"]')])
    await p.waitForSelector('button[type="submit"]')
    await Promise.all([p.waitForNavigation(), p.click('button[type="submit"]')])
    await waitForText(p, 'Sign out')
    expect(p.url()).not.toContain('oidc-code')
    await waitForText(p, 'dark_mode')
    const text = await bodyText(p)
    expect(text).toContain('ada')
    expect(text).not.toContain('banner')
    await clickButton(p, 'Sign out')
    await waitForText(p, 'Sign in with Example')
  } finally {
    await p.close()
  }
})

test.skipIf(!chromium)('a sign-in that fails ends on the sign-in page with a sentence', async () => {
  const p = await (browser as Browser).newPage()
  try {
    await p.goto(`${(d as Daemon).url}/api/auth/oidc/callback?error=access_denied&state=x`)
    await waitForText(p, 'The identity provider refused the sign-in (access_denied).')
    expect(await bodyText(p)).toContain('Sign in with Example')
  } finally {
    await p.close()
  }
})

test.skipIf(!chromium)('a sign-in code from another browser signs no one in (login CSRF)', async () => {
  // the attacker's own sign-in, outside this browser: its code, without this browser's cookie
  const start = await fetch(`${(d as Daemon).url}/api/auth/oidc/start`, { redirect: 'manual' })
  const cookie = (start.headers.get('set-cookie') as string).split(';')[0] as string
  const back = await (provider as TestProvider).signIn(start.headers.get('location') as string, 'u-ada')
  const callback = await fetch(back, { headers: { cookie }, redirect: 'manual' })
  const code = /#oidc-code=(.+)$/.exec(callback.headers.get('location') as string)?.[1]
  expect(code).toBeDefined()
  const p = await (browser as Browser).newPage()
  try {
    await p.goto(`${(d as Daemon).url}/ui/#oidc-code=${code}`)
    await waitForText(p, 'another browser')
    const text = await bodyText(p)
    expect(text).toContain('Sign in with Example')
    expect(text).not.toContain('Sign out')
  } finally {
    await p.close()
  }
})
