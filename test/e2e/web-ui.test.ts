/**
 * docs/ui.md in Chromium (Debian's package, driven by puppeteer-core): the web UI served by the
 * daemon, signed into with the labelled fields, a flag toggled with its switch, a teammate's change
 * appearing live, sign-out, the phone viewport, and the page's own headers (CSP, no-store, cacheable
 * assets under 300 KB gzipped). Screenshots land in a temp directory when a test fails. In CI
 * (TEST_REQUIRE_BROWSER=1) a missing browser is a failure.
 */

import { afterAll, afterEach, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import type { Browser, Page } from 'puppeteer-core'
import type { Daemon } from '../helpers/daemon.ts'
import {
  bodyText,
  clickButton,
  fillByLabel,
  findChromium,
  layoutWidth,
  pageCookies,
  releaseScratch,
  screenshotTo,
  selectByLabel,
  sessionOf,
  switchOf,
  visit,
  waitForNoSwitch,
  waitForPath,
  waitForSwitch,
  waitForText,
} from '../helpers/ui-driver.ts'
import { startUiFixture, type UiFixture } from '../helpers/ui-fixture.ts'

setDefaultTimeout(60_000)
const chromium = findChromium()

const shots = mkdtempSync(join(tmpdir(), 'flagd-ui-shots-'))
let ui: UiFixture
let d: Daemon
let browser: Browser | undefined
let page: Page | undefined
const api = (method: string, path: string, body?: unknown) => ui.api(method, path, body)

beforeAll(async () => {
  if (!chromium) return
  ui = await startUiFixture(chromium)
  ;({ d, browser } = ui)
  for (const flag of [
    { name: 'shop/checkout/new_flow', type: 'BOOLEAN' },
    { name: 'shop/retries', type: 'INTEGER', value: 3 },
    { name: 'top', type: 'BOOLEAN', value: true },
  ])
    await api('POST', '/api/flags', flag)
}, 60_000)

afterEach(async () => {
  // every test leaves its last screen in the shots directory (printed at the end), failures included
  if (page) await screenshotTo(page, join(shots, `${Date.now()}.png`))
  await page?.close().catch(() => {})
  page = undefined
})

afterAll(async () => {
  releaseScratch(shots)
  await ui?.close()
})

/**
 * A tab at `/` (sent on to /ui/) signed in as the admin: through the form when it is the test's
 * subject (`form`), else with a session from the API put where the form puts it (a cheaper load).
 */
async function signIn(viewport = { width: 1280, height: 800 }, form = false): Promise<Page> {
  page = await browser!.newPage()
  await page.setViewport(viewport)
  const violations: string[] = []
  page.on('console', (m) => m.type() === 'error' && violations.push(m.text()))
  const session = form ? undefined : await sessionOf(d.url, 'admin', 'admin-password')
  const seed = session && (await page.evaluateOnNewDocument((t) => sessionStorage.setItem('flagd.token', t), session))
  await page.goto(`${d.url}/`)
  expect(page.url()).toBe(`${d.url}/ui/`)
  if (seed) await page.removeScriptToEvaluateOnNewDocument(seed.identifier)
  else {
    await fillByLabel(page, 'Username', 'admin')
    await fillByLabel(page, 'Password', 'admin-password')
    await clickButton(page, 'Sign in')
  }
  await page.waitForSelector('[role="switch"]')
  expect(violations.filter((v) => /Content Security Policy/i.test(v))).toEqual([])
  return page
}

test.skipIf(!chromium)('sign in, toggle a flag with its switch', async () => {
  const p = await signIn(undefined, true)
  const toggle = await p.waitForSelector(switchOf('shop/checkout/new_flow in development'))
  expect(await toggle!.evaluate((el) => el.getAttribute('aria-checked'))).toBe('false')
  await toggle!.click()
  await waitForSwitch(p, 'shop/checkout/new_flow in development', true)
  const flag = (await (await api('GET', '/api/flags/shop/checkout/new_flow')).json()) as { value: boolean }
  expect(flag.value).toBe(true)
})

test.skipIf(!chromium)('the flags are a tree: groups nest, a closed group stays closed through live changes, search opens it', async () => {
  const p = await signIn()
  // the group rows above a flag's row, outermost first, by the group paths they carry
  const groupsAround = (name: string) =>
    p.evaluate(`(() => {
      const parts = '${name}'.split('/').slice(0, -1)
      return parts.map((_, i) => parts.slice(0, i + 1).join('/')).filter((g) => document.querySelector('tr[data-group="' + g + '"]'))
    })()`)
  // shown to a person: rendered and not under a closed group row (puppeteer's own visible/hidden misses the latter)
  const waitShown = (name: string, shown: boolean) =>
    p.waitForFunction(`document.querySelector('tr[data-flag="${name}"]')?.checkVisibility() === ${shown}`, { timeout: 5000 })
  expect(await groupsAround('shop/checkout/new_flow')).toEqual(['shop', 'shop/checkout'])
  expect(await groupsAround('top')).toEqual([])
  const summary = await p.waitForSelector('tr[data-group="shop"] button')
  expect(await summary!.evaluate((el) => el.textContent)).toBe('shop 2 flags')
  await summary!.click()
  await waitShown('shop/checkout/new_flow', false)
  await waitShown('top', true)
  await api('POST', '/api/flags', { name: 'shop/checkout/tree_probe', type: 'INTEGER', value: 1 })
  try {
    await p.waitForSelector('tr[data-flag="shop/checkout/tree_probe"]', { timeout: 5000 })
    expect(await summary!.evaluate((el) => el.textContent)).toBe('shop 3 flags')
    await waitShown('shop/checkout/tree_probe', false) // the live change did not reopen the group
    await fillByLabel(p, 'Search flags', 'tree_probe')
    await waitShown('shop/checkout/tree_probe', true)
    await fillByLabel(p, 'Search flags', '')
    await waitShown('shop/checkout/new_flow', false) // closed again once the search is cleared
    await summary!.click()
    await waitShown('shop/checkout/new_flow', true)
  } finally {
    await api('DELETE', '/api/flags/shop/checkout/tree_probe')
  }
})

test.skipIf(!chromium)('a change made through the API appears without reload; search narrows the list', async () => {
  const p = await signIn()
  await api('PUT', '/api/flags/top', { value: false })
  await waitForSwitch(p, 'top in development', false, 5000)
  await api('POST', '/api/flags', { name: 'shop/live_new', type: 'BOOLEAN' })
  await p.waitForSelector(switchOf('shop/live_new in development'), { timeout: 5000 })
  await fillByLabel(p, 'Search flags', 'retries')
  await waitForNoSwitch(p, 'top in development')
  expect(await p.$eval('body', (b) => b.textContent ?? '')).toContain('retries')
})

test.skipIf(!chromium)('sign-out ends the session; the phone viewport works', async () => {
  const p = await signIn({ width: 390, height: 844 }, true)
  expect(await layoutWidth(p)).toBeLessThanOrEqual(390)
  const token = await p.evaluate(() => sessionStorage.getItem('flagd.token'))
  await clickButton(p, 'Sign out')
  await p.waitForSelector('#username')
  expect(await p.evaluate(() => sessionStorage.getItem('flagd.token'))).toBeNull()
  expect((await fetch(`${d.url}/api/me`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401)
  expect(await pageCookies(p)).toBe('')
})

test.skipIf(!chromium)('wrong credentials show the service message', async () => {
  page = await browser!.newPage()
  await page.goto(`${d.url}/ui/`)
  await fillByLabel(page, 'Username', 'admin')
  await fillByLabel(page, 'Password', 'wrong-password')
  await clickButton(page, 'Sign in')
  const alert = await page.waitForSelector('[role="alert"]')
  expect(await alert!.evaluate((el) => el.textContent)).toBe('invalid username or password')
})

test.skipIf(!chromium)('the page: CSP from this origin only, HTML no-store, fingerprinted assets cacheable and small', async () => {
  const res = await fetch(`${d.url}/ui/`)
  expect(res.headers.get('content-security-policy')).toContain("script-src 'self'")
  expect(res.headers.get('content-security-policy')).not.toContain('unsafe-inline')
  expect(res.headers.get('cache-control')).toBe('no-store')
  const html = await res.text()
  expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/) // no inline script
  const assets = [...html.matchAll(/\/ui\/assets\/[^"]+/g)].map((m) => m[0])
  expect(assets.length).toBeGreaterThanOrEqual(2)
  let gzipped = 0
  for (const path of assets) {
    expect(path).toMatch(/-[a-z0-9]{6,}\.(js|css)$/)
    const asset = await fetch(`${d.url}${path}`)
    expect(asset.headers.get('cache-control')).toContain('immutable')
    gzipped += gzipSync(new Uint8Array(await asset.arrayBuffer())).length
  }
  expect(gzipped).toBeLessThan(300 * 1024)
  expect((await fetch(`${d.url}/ui/assets/missing-123.js`)).status).toBe(404)
  // the icon every browser asks for, linked from the page: no 404 in any page's log
  expect(html).toContain('<link rel="icon" type="image/svg+xml" href="/favicon.ico">')
  const icon = await fetch(`${d.url}/favicon.ico`)
  expect([icon.status, icon.headers.get('content-type')]).toEqual([200, 'image/svg+xml'])
  expect(await icon.text()).toStartWith('<svg')
})

test.skipIf(!chromium)('create a flag (type first), see a validation error next to its field, fix it', async () => {
  const p = await signIn()
  const link = await p.waitForSelector('a[href="/ui/new"]')
  await link!.click()
  await selectByLabel(p, 'Type', 'INTEGER')
  await fillByLabel(p, 'Name', 'shop/max_items')
  await fillByLabel(p, 'Maximum', '10')
  await fillByLabel(p, 'Default value', '50')
  await clickButton(p, 'Create')
  const error = await p.waitForSelector('.field-error')
  expect(await error!.evaluate((el) => el.textContent)).toContain('10') // the service's own words: at most 10
  expect(await error!.evaluate((el) => el.parentElement?.querySelector('label')?.textContent)).toBe('Default value')
  await fillByLabel(p, 'Default value', '5')
  await clickButton(p, 'Create')
  await waitForPath(p, '/ui/flags/shop/max_items')
  await waitForText(p, 'revision 1')
  const flag = (await (await api('GET', '/api/flags/shop/max_items')).json()) as { defaultValue: number; maxValue: number }
  expect(flag).toMatchObject({ defaultValue: 5, maxValue: 10 })
})

test.skipIf(!chromium)(
  'UI details: a name error shown once; the header time in the viewer locale; a ruled switch says what it sets; UI changes audited as ui',
  async () => {
    const p = await signIn()
    await visit(p, `${d.url}/ui/new`)
    await selectByLabel(p, 'Type', 'BOOLEAN')
    await fillByLabel(p, 'Name', 'bad name')
    await clickButton(p, 'Create')
    await p.waitForSelector('.field-error')
    const alerts = await p.$$eval('[role="alert"]', (els) => els.map((e) => e.textContent ?? ''))
    expect(alerts.filter((a) => a.includes('may contain only')).length).toBe(1)
    await fillByLabel(p, 'Name', 'shop/ruled')
    await clickButton(p, 'Create')
    await waitForPath(p, '/ui/flags/shop/ruled')
    await waitForText(p, 'revision 1')
    const header = await p.$eval('.meta time', (t) => [t.textContent, t.getAttribute('datetime')])
    // in the viewer's locale and zone, the zone named (docs/ui.md#times); the exact moment in datetime
    expect(header[0]).toBe(
      await p.evaluate(
        `new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' }).format(new Date(${JSON.stringify(header[1])}))`,
      ),
    )
    expect(header[1]).toMatch(/^\d{4}-\d{2}-\d{2}T/)
    const entries = (await (await api('GET', '/api/audit?flag=shop/ruled')).json()) as { source: string }[]
    expect(entries.map((e) => e.source)).toEqual(['ui'])
    // with a rule, the list's switch says it sets the value where the rule names no variant
    await api('PUT', '/api/flags/shop/ruled', { targeting: { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'true'] } })
    await visit(p, `${d.url}/ui/`)
    await p.waitForSelector(switchOf('shop/ruled in development'))
    const described = await p.$eval(switchOf('shop/ruled in development'), (b) => {
      const note = b.parentElement?.querySelector('.switch-note')
      return note && note.id === b.getAttribute('aria-describedby') ? note.textContent : null
    })
    expect(described).toBe('if no rule matches')
    expect(await p.$eval(switchOf('shop/ruled in development'), (b) => b.getAttribute('title'))).toContain('the rule decides first')
    expect(await p.$eval(switchOf('top in development'), (b) => b.getAttribute('aria-describedby'))).toBeNull()
  },
)

test.skipIf(!chromium)('edit a value, roll the mistake back from the history, rename, delete', async () => {
  await api('POST', '/api/flags', { name: 'shop/banner', type: 'STRING', value: 'welcome' })
  const p = await signIn()
  await visit(p, `${d.url}/ui/flags/shop/banner`)
  await waitForText(p, 'History')
  await fillByLabel(p, 'Value', 'oops')
  await clickButton(p, 'Save')
  await waitForText(p, 'saved as revision 2')
  await waitForText(p, '"welcome" → "oops"')
  await clickButton(p, 'Roll back to revision 1')
  // a rollback asks first, like every action that replaces what is there
  expect(((await (await api('GET', '/api/flags/shop/banner')).json()) as { value: string }).value).toBe('oops')
  await clickButton(p, 'Restore revision 1 now')
  await waitForText(p, 'rolled back to revision 1')
  expect(((await (await api('GET', '/api/flags/shop/banner')).json()) as { value: string }).value).toBe('welcome')
  await fillByLabel(p, 'New name', 'shop/hello_banner')
  await clickButton(p, 'Rename')
  await waitForPath(p, '/ui/flags/shop/hello_banner')
  // the page has loaded the renamed flag (its history shows the rename) before anything is clicked
  await waitForText(p, '"shop/banner" → "shop/hello_banner"')
  await clickButton(p, 'Delete')
  await clickButton(p, 'Delete shop/hello_banner for good')
  await waitForPath(p, '/ui/')
  expect((await api('GET', '/api/flags/shop/hello_banner')).status).toBe(404)
  expect(await bodyText(p)).not.toContain('hello_banner')
})

test.skipIf(!chromium)(
  'edits not yet saved survive a change pushed live; saving them over that change is refused, not an undo',
  async () => {
    await api('POST', '/api/flags', { name: 'shop/notice', type: 'STRING', value: 'a' })
    const p = await signIn()
    await visit(p, `${d.url}/ui/flags/shop/notice`)
    await waitForText(p, 'History')
    await fillByLabel(p, 'Description', 'mine')
    // someone else changes the flag meanwhile: the page hears of it and shows it in the history
    expect((await api('PUT', '/api/flags/shop/notice', { value: 'theirs' })).status).toBe(200)
    await waitForText(p, '"a" → "theirs"')
    expect(await p.$eval('#f-description', (i) => (i as unknown as { value: string }).value)).toBe('mine')
    await clickButton(p, 'Save')
    await waitForText(p, 'read it again and retry')
    const flag = (await (await api('GET', '/api/flags/shop/notice')).json()) as { value: string; description?: string }
    expect(flag.value).toBe('theirs')
    expect(flag.description ?? '').toBe('')
  },
)

test.skipIf(!chromium)('when the service cannot be reached, the page says so instead of staying blank', async () => {
  const p = await signIn()
  await p.setRequestInterception(true)
  p.on('request', (r) => (r.url().endsWith('/api/flags') ? r.abort('connectionrefused') : r.continue()))
  await p.reload()
  await waitForText(p, 'flagd cannot be reached')
  expect(await p.$eval('[role="alert"]', (a) => a.textContent)).toContain('check that the daemon is running')
})

test.skipIf(!chromium)('the API explorer renders the document under its CSP, with nothing refused', async () => {
  const p = (page = await browser!.newPage())
  const violations: string[] = []
  p.on('console', (m) => {
    if (/Content Security Policy|Refused to/.test(m.text())) violations.push(m.text())
  })
  await p.goto(`${d.url}/api/docs`)
  await p.waitForFunction("document.querySelector('.swagger-ui .info .title')?.textContent?.includes('flagd')", { timeout: 30_000 })
  await p.waitForSelector('.opblock-summary-path')
  expect(violations).toEqual([])
})

test.skipIf(!chromium)(
  'allowed values are edited as a list: a value with a comma or spaces survives a save, and one can be added as typed',
  async () => {
    await api('POST', '/api/flags', { name: 'shop/region', type: 'ENUM', enumValues: ['eu,west', 'us'], defaultValue: 'eu,west' })
    const p = await signIn()
    await visit(p, `${d.url}/ui/flags/shop/region`)
    await waitForText(p, 'Allowed values')
    // the select shows the value with its comma, not blank
    expect(await p.$eval('#f-default', (s) => (s as unknown as { value: string }).value)).toBe('eu,west')
    await fillByLabel(p, 'Description', 'regions')
    await clickButton(p, 'Save')
    await waitForText(p, 'saved as revision 2')
    let flag = (await (await api('GET', '/api/flags/shop/region')).json()) as { enumValues: string[]; description: string }
    expect(flag).toMatchObject({ enumValues: ['eu,west', 'us'], description: 'regions' })
    await clickButton(p, 'Add a value')
    await fillByLabel(p, 'Allowed value 3', ' ap south ')
    await clickButton(p, 'Save')
    await waitForText(p, 'saved as revision 3')
    flag = (await (await api('GET', '/api/flags/shop/region')).json()) as { enumValues: string[]; description: string }
    expect(flag.enumValues).toEqual(['eu,west', 'us', ' ap south '])
  },
)

test.skipIf(!chromium)('a multi-line string value keeps its line breaks through the form', async () => {
  const value = '{\n  "a": 1\n}'
  await api('POST', '/api/flags', { name: 'shop/config', type: 'STRING', value })
  const p = await signIn()
  await visit(p, `${d.url}/ui/flags/shop/config`)
  await waitForText(p, 'History')
  expect(await p.$eval('#f-value', (el) => el.tagName)).toBe('TEXTAREA')
  await fillByLabel(p, 'Description', 'json config')
  await clickButton(p, 'Save')
  await waitForText(p, 'saved as revision 2')
  const flag = (await (await api('GET', '/api/flags/shop/config')).json()) as { value: string }
  expect(flag.value).toBe(value)
})

test.skipIf(!chromium)('an unpinned A/B test shows its split, in the list and on its page, not a variant', async () => {
  await api('POST', '/api/flags', { name: 'shop/ab_checkout', type: 'AB-TEST', chancePercentB: 30 })
  const p = await signIn()
  await waitForText(p, 'split 70/30')
  // the flag's page reached in the app, as its link goes (ui-driver's visit): the loaded document stays
  await p.evaluate(() => Object.assign(globalThis, { loadedOnce: true }))
  await visit(p, `${d.url}/ui/flags/shop/ab_checkout`)
  await waitForText(p, 'users are split A 70% / B 30% by targetingKey')
  expect(await p.evaluate(() => (globalThis as { loadedOnce?: boolean }).loadedOnce)).toBe(true)
  expect(await bodyText(p)).not.toContain('else the default applies)')
})
