/**
 * docs/openfeature.md#ofrep (with CORS, docs/api.md#conventions) in a real browser: a page on another origin (with `cors.origins` set) evaluates a
 * flag with the OpenFeature web SDK and the OFREP web provider through Chromium's own fetch and
 * EventSource, CORS and all, and sees a change pushed over the event stream (polling is set far out
 * of reach). Needs Debian's `chromium`; `.ci/run` installs it and sets TEST_REQUIRE_BROWSER=1, so in
 * CI a missing browser is a failure, not a skip.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser } from 'puppeteer-core'
import { type Daemon, startDaemon } from '../helpers/daemon.ts'
import { isolatedBrowser } from '../helpers/shared-chromium.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(60_000)
const chromium = Bun.which('chromium') ?? Bun.which('chromium-browser') ?? Bun.which('google-chrome')
if (!chromium && process.env.TEST_REQUIRE_BROWSER === '1') throw new Error('no chromium on the PATH: install Debian\'s package "chromium"')

const cwd = tempDir()
let d: Daemon
let page: ReturnType<typeof Bun.serve> | undefined
let browser: Browser | undefined

beforeAll(async () => {
  if (!chromium) return
  const built = await Bun.build({ entrypoints: [join(import.meta.dir, '../fixtures/browser/ofrep-page.ts')], target: 'browser' })
  if (!built.success) throw new Error(`bundling the page failed: ${built.logs.join('\n')}`)
  const script = await built.outputs[0]!.text()
  // the page's server binds first (a port the kernel picks), so the daemon can be told its origin
  page = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: (req) =>
      new URL(req.url).pathname === '/page.js'
        ? new Response(script, { headers: { 'content-type': 'text/javascript' } })
        : new Response('<!doctype html><title>shop</title><script type="module" src="/page.js"></script>', {
            headers: { 'content-type': 'text/html' },
          }),
  })
  const origin = `http://127.0.0.1:${page.port}`
  d = await startDaemon(cwd, [], { FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: 'admin-password', FLAGD_CORS_ORIGINS: origin })
  browser = await isolatedBrowser(chromium)
}, 60_000)

afterAll(async () => {
  await browser?.close()
  page?.stop(true)
  d?.proc.kill('SIGTERM')
  await d?.proc.exited
  rmSync(cwd, { recursive: true, force: true })
})

test.skipIf(!chromium)('a page on another origin sees a flag change pushed over SSE, through CORS', async () => {
  const api = (method: string, path: string, body: unknown, token: string) =>
    fetch(`${d.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }))
  const login = await fetch(`${d.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'admin-password' }),
  })
  const admin = ((await login.json()) as { token: string }).token
  expect((await api('POST', '/api/flags', { name: 'shop/limit', type: 'INTEGER', value: 1 }, admin)).status).toBe(201)
  const token = (await api('POST', '/api/tokens', { name: 'shop page', permissions: ['flag:evaluate'], flagPrefixes: ['shop/'] }, admin))
    .body.token as string

  const tab = await browser!.newPage()
  const query = new URLSearchParams({ flagd: d.url, token, flag: 'shop/limit' })
  await tab.goto(`http://127.0.0.1:${page!.port}/?${query}`)
  await tab.waitForFunction('window.ready === true || window.failed !== undefined', { timeout: 15_000 })
  expect(await tab.evaluate('window.failed')).toBeUndefined()
  expect(await tab.evaluate('window.seen')).toEqual([1])

  await Bun.sleep(300) // the stream opens after the first bulk evaluation
  const sent = performance.now()
  expect((await api('PUT', '/api/flags/shop/limit', { value: 2 }, admin)).status).toBe(200)
  await tab.waitForFunction('window.seen.includes(2)', { timeout: 5_000, polling: 10 })
  const elapsed = performance.now() - sent
  console.log(`browser saw the change ${elapsed.toFixed(0)} ms after the PUT was sent`)
  expect(await tab.evaluate('window.seen.at(-1)')).toBe(2)
})
