/**
 * docs/ui.md#review-before-protected-changes in Chromium: a write to a protected environment opens
 * `Review changes` first (a switch in the table, a promotion on Compare); `Request approval` makes a
 * change request with the title and comment and links to it; a person holding `flag:bypass` may tick
 * `Apply now without review`; Escape changes nothing; Compare leaves a flag unticked whose promotion
 * would end a running rollout; axe-core on the open dialog at both widths.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import {
  allViolations,
  checkByLabel,
  clickButton,
  clickLink,
  fillByLabel,
  selectByLabel,
  switchOf,
  waitForText,
} from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

// the page's globals, for the functions run in Chromium (the DOM library stays out of the project: ui-driver.ts)
declare const document: any
declare const window: { innerWidth: number }

setDefaultTimeout(90_000)
const suite = browserSuite('ui-review', async (ui) => {
  expect((await ui.api('PUT', '/api/environments/staging', { description: 'the staging one' })).status).toBe(201)
  expect((await ui.api('PUT', '/api/environments/production', { protected: true, requiredApprovals: 1 })).status).toBe(201)
  for (const name of ['shop/dark_mode', 'shop/banner', 'shop/other', 'promo/other', 'promo/ramp'])
    expect((await ui.api('POST', '/api/flags', { name, type: 'BOOLEAN', value: false })).status).toBe(201)
  // a rollout running in production (the admin holds flag:bypass there); staging differs from production on two flags
  // running whenever the test runs: a window around any moment of the daemon's real clock
  const rollout = { variant: 'true', start: '2020-01-01T00:00:00.000Z', end: '2099-01-01T00:00:00.000Z' }
  expect(
    (await ui.api('PUT', '/api/flags/promo/ramp?environment=production', { rollout: { ...rollout, fromPercent: 5, toPercent: 100 } }))
      .status,
  ).toBe(200)
  for (const name of ['promo/other', 'promo/ramp'])
    expect((await ui.api('PUT', `/api/flags/${name}?environment=staging`, { value: true })).status).toBe(200)
  expect((await ui.api('POST', '/api/flags', { name: 'save/limit', type: 'INTEGER', value: 3 })).status).toBe(201)
  expect((await ui.api('POST', '/api/flags', { name: 'copy/limit', type: 'INTEGER', value: 3 })).status).toBe(201)
  expect((await ui.api('PUT', '/api/flags/copy/limit?environment=staging', { value: 7 })).status).toBe(200)
  const author = { username: 'author', password: 'author-password-1', permissions: ['flag:read', 'flag:write'] }
  expect((await ui.api('POST', '/api/users', author)).status).toBe(201)
})
const chromium = suite.chromium
const api = (method: string, path: string, body?: unknown) => suite.ui.api(method, path, body)
const valueIn = async (env: string, name: string) =>
  ((await (await api('GET', `/api/flags/${name}?environment=${env}`)).json()) as { value: unknown }).value
type Request = { id: string; title: string; description: string; state: string; changes: { flag: string; set: Record<string, unknown> }[] }
const requestsFor = async (flag: string) => (await (await api('GET', `/api/change-requests?flag=${flag}`)).json()) as Request[]

const DIALOG = 'dialog[open][aria-modal="true"]'
/** The open dialog's accessible name and text. */
const dialogOf = (p: Page) =>
  p.$eval(DIALOG, (d) => ({
    name: document.getElementById(d.getAttribute('aria-labelledby') ?? '')?.textContent ?? '',
    role: (d as unknown as { role?: string }).role ?? d.getAttribute('role') ?? d.tagName.toLowerCase(),
    text: d.textContent ?? '',
  }))

/** Opens the flags page in development and toggles `flag`'s switch in production's column: the review opens. */
async function toggleInProduction(p: Page, flag: string): Promise<void> {
  await selectByLabel(p, 'Environment', 'development')
  await p.waitForSelector(switchOf(`${flag} in production`))
  await p.click(switchOf(`${flag} in production`))
  await p.waitForSelector(DIALOG)
}

test.skipIf(!chromium)(
  "an author's switch in production is reviewed, then requested with its title and comment, and links to the request",
  async () => {
    const p = await suite.open('author', 'author-password-1')
    await toggleInProduction(p, 'shop/dark_mode')
    const dialog = await dialogOf(p)
    expect(dialog.name).toBe('Review changes')
    expect(dialog.role).toBe('dialog')
    expect(dialog.text).toContain('value false → true')
    expect(dialog.text).not.toContain('Apply now without review')
    await fillByLabel(p, 'Title', 'Dark mode for everyone')
    await fillByLabel(p, 'Comment', 'Support asked for it')
    await clickButton(p, 'Request approval')
    const href = await (await p.waitForSelector(`${DIALOG} .review-made a`))!.evaluate((a) => a.getAttribute('href'))
    const [made] = await requestsFor('shop/dark_mode')
    expect(made).toMatchObject({ title: 'Dark mode for everyone', description: 'Support asked for it', state: 'open' })
    expect(made?.changes).toEqual([{ flag: 'shop/dark_mode', set: { value: true } }])
    expect(href).toBe(`/ui/change-requests/${made?.id}`)
    expect(await valueIn('production', 'shop/dark_mode')).toBe(false)
    await clickButton(p, 'Close')
    await p.waitForFunction((s) => !document.querySelector(s), {}, DIALOG)
  },
)

test.skipIf(!chromium)('an admin holding flag:bypass requests by default, and applies at once only when ticking the box', async () => {
  const p = await suite.open()
  await toggleInProduction(p, 'shop/banner')
  const box = await p.$eval('#review-apply-now', (b) => (b as unknown as { checked: boolean }).checked)
  expect(box).toBe(false)
  expect((await dialogOf(p)).text).toContain('Apply now without review')
  await clickButton(p, 'Request approval')
  await p.waitForSelector(`${DIALOG} .review-made a`)
  expect((await requestsFor('shop/banner')).map((r) => r.state)).toEqual(['open'])
  expect(await valueIn('production', 'shop/banner')).toBe(false)
  await clickButton(p, 'Close')
  await p.waitForFunction((s) => !document.querySelector(s), {}, DIALOG)

  await p.click(switchOf('shop/banner in production'))
  await p.waitForSelector(DIALOG)
  await checkByLabel(p, 'Apply now without review', true)
  await clickButton(p, 'Request approval')
  await p.waitForFunction((s) => !document.querySelector(s), {}, DIALOG)
  expect(await valueIn('production', 'shop/banner')).toBe(true)
  expect(await requestsFor('shop/banner')).toHaveLength(1)
})

test.skipIf(!chromium)('Escape cancels the review: nothing changes, and focus stays inside the dialog while it is open', async () => {
  const p = await suite.open('author', 'author-password-1')
  const before = (await (await api('GET', '/api/change-requests')).json()) as unknown[]
  await toggleInProduction(p, 'shop/other')
  for (let i = 0; i < 8; i++) {
    await p.keyboard.press('Tab')
    expect(await p.evaluate((s) => Boolean(document.querySelector(s)?.contains(document.activeElement)), DIALOG)).toBe(true)
  }
  await p.keyboard.press('Escape')
  await p.waitForFunction((s) => !document.querySelector(s), {}, DIALOG)
  expect(await valueIn('production', 'shop/other')).toBe(false)
  expect((await (await api('GET', '/api/change-requests')).json()) as unknown[]).toHaveLength(before.length)
})

test.skipIf(!chromium)(
  'Compare leaves unticked a flag whose promotion would end a running rollout; a promotion is reviewed and requested',
  async () => {
    const p = await suite.open('author', 'author-password-1')
    await clickLink(p, 'Compare')
    await selectByLabel(p, 'From', 'staging')
    await selectByLabel(p, 'To', 'production')
    await fillByLabel(p, 'Names starting with', 'promo/')
    await clickButton(p, 'Show differences')
    await waitForText(p, 'Promote promo/ramp')
    await p.waitForFunction(() => ![...document.querySelectorAll('label')].some((l) => l.textContent?.startsWith('Promote shop/')))
    const ticked = (label: string) =>
      p.evaluate((l) => {
        const id = [...document.querySelectorAll('label')].find((x) => x.textContent === l)?.htmlFor ?? ''
        return (document.getElementById(id) as unknown as { checked: boolean }).checked
      }, label)
    expect(await ticked('Promote promo/ramp')).toBe(false)
    expect(await ticked('Promote promo/other')).toBe(true)
    await waitForText(p, 'ends the rollout running in production')
    await clickButton(p, 'Promote')
    await p.waitForSelector(DIALOG)
    const text = (await dialogOf(p)).text
    expect(text).toContain('promo/other')
    expect(text).toContain('value false → true')
    expect(text).not.toContain('promo/ramp')
    await clickButton(p, 'Request approval')
    await p.waitForSelector(`${DIALOG} .review-made a`)
    const [made] = await requestsFor('promo/other')
    expect(made?.changes).toEqual([{ flag: 'promo/other', set: { value: true } }])
    expect(await valueIn('production', 'promo/other')).toBe(false)
    expect(await requestsFor('promo/ramp')).toEqual([])
  },
)

test.skipIf(!chromium)('Copy from another environment into production is reviewed too, and requested', async () => {
  const p = await suite.open('author', 'author-password-1')
  await selectByLabel(p, 'Environment', 'production')
  await p.goto(`${suite.ui.d.url}/ui/flags/copy/limit`)
  await clickButton(p, 'Copy from staging')
  await p.waitForSelector(DIALOG)
  expect((await dialogOf(p)).text).toContain('value 3 → 7')
  await clickButton(p, 'Request approval')
  await p.waitForSelector(`${DIALOG} .review-made a`)
  const [made] = await requestsFor('copy/limit')
  expect(made?.changes).toEqual([{ flag: 'copy/limit', set: { value: 7 } }])
  expect(await valueIn('production', 'copy/limit')).toBe(3)
})

test.skipIf(!chromium)("a save on a flag's page is reviewed with the page's schedule, and requested for that time", async () => {
  const p = await suite.open('author', 'author-password-1')
  await selectByLabel(p, 'Environment', 'production')
  await p.goto(`${suite.ui.d.url}/ui/flags/save/limit`)
  await fillByLabel(p, 'Value', '5')
  // a date-time input is set as a person's picker sets it: its value, then an input event
  const typed = '2030-01-02T09:30'
  await p.$eval(
    '#f-schedule',
    (i, v) => {
      const input = i as unknown as { value: string; dispatchEvent(e: unknown): void }
      input.value = v
      input.dispatchEvent(new Event('input', { bubbles: true }))
    },
    typed,
  )
  // Enter in the value submits its own form (the targeting editor's button is named Request change too)
  await p.focus('#f-value')
  await p.keyboard.press('Enter')
  await p.waitForSelector(DIALOG)
  expect((await dialogOf(p)).text).toContain('value 3 → 5')
  expect(await p.$eval('#review-schedule', (i) => (i as unknown as { value: string }).value)).toBe(typed)
  await clickButton(p, 'Request approval')
  await p.waitForSelector(`${DIALOG} .review-made a`)
  const [made] = (await requestsFor('save/limit')) as (Request & { scheduledAt: string })[]
  expect(made?.changes).toEqual([{ flag: 'save/limit', set: { value: 5 } }])
  expect(made?.scheduledAt).toBe(await p.evaluate((v) => new Date(v).toISOString(), typed))
  expect(await valueIn('production', 'save/limit')).toBe(3)
})

test.skipIf(!chromium)('axe-core finds nothing on the open dialog at 1440×900 and 390×844', async () => {
  for (const viewport of [
    { width: 1440, height: 900 },
    { width: 390, height: 844 },
  ]) {
    const p = await suite.open('admin', 'admin-password', viewport)
    await p.goto(`${suite.ui.d.url}/ui/flags/shop/dark_mode`)
    await selectByLabel(p, 'Environment', 'production')
    await clickButton(p, 'Enabled')
    await p.waitForSelector(DIALOG)
    expect(await allViolations(p, 'dialog[open]')).toEqual([])
    // the dialog fits the window's width, its own content included
    const fits = await p.$eval(DIALOG, (d) => d.getBoundingClientRect().right <= window.innerWidth && d.scrollWidth <= d.clientWidth)
    expect(fits).toBe(true)
    await p.keyboard.press('Escape')
    // the page hears that the review was cancelled, and keeps what it had
    await waitForText(p, 'review cancelled: nothing was changed')
    expect(await p.evaluate(() => document.querySelector('dialog') === null)).toBe(true)
    const enabled = (await (await api('GET', '/api/flags/shop/dark_mode?environment=production')).json()) as { enabled: boolean }
    expect(enabled.enabled).toBe(true)
  }
})
