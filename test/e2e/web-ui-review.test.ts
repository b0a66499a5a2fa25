/**
 * docs/ui.md#review-before-protected-changes in Chromium, with production protected (1 approval): a
 * write to it opens `Review changes` first (a switch in the table, a promotion on Compare, Copy from
 * another environment, a save with a schedule, a rollback from a flag's history, a delete or an
 * archive); `Request approval` makes a change request and changes nothing yet; a person holding
 * `flag:bypass` may tick `Apply now without review`; Escape changes nothing. A rollback in staging
 * that restores a shared field reaches production (docs/ui.md#shared-fields-reach-every-environment).
 * One daemon, seed and browser context for all: each test has flags of its own and starts in
 * development.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import {
  clickButton,
  clickEnabledButton,
  clickLink,
  fillByLabel,
  openedReview,
  openSignedIn,
  REVIEW_DIALOG,
  selectByLabel,
  sessionOf,
  switchOf,
  waitForText,
} from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

// the page's globals, for the functions run in Chromium (the DOM library stays out of the project: ui-driver.ts)
declare const document: any
declare const window: { innerWidth: number }
declare const location: { pathname: string }

setDefaultTimeout(120_000)
const AUTHOR = ['author', 'author-password-1'] as const
/** Per rollback flag, the revision to roll back to (production `true` and enabled; staging 4 with default 0). */
const revisionOf = new Map<string, number>()
const RETIRED = ['old/delete-asked', 'old/archive-asked', 'old/delete-now', 'old/archive-now']

const suite = browserSuite('ui-review', async (ui) => {
  const ok = async (method: string, path: string, body: unknown, status: number) => {
    const res = await ui.api(method, path, body)
    expect({ path, status: res.status }).toEqual({ path, status })
    return res
  }
  await ok('PUT', '/api/environments/staging', { description: 'the staging one' }, 201)
  await ok('PUT', '/api/environments/production', {}, 201)
  for (const name of [
    'shop/dark_mode',
    'shop/banner',
    'shop/other',
    'promo/other',
    'promo/ramp',
    'mobile/push',
    'hist/requested',
    'hist/bypassed',
  ])
    await ok('POST', '/api/flags', { name, type: 'BOOLEAN', value: false }, 201)
  for (const name of RETIRED) await ok('POST', '/api/flags', { name, type: 'BOOLEAN', value: true }, 201)
  for (const name of ['save/limit', 'copy/limit']) await ok('POST', '/api/flags', { name, type: 'INTEGER', value: 3 }, 201)
  for (const name of ['back/requested', 'back/bypassed'])
    await ok('POST', '/api/flags', { name, type: 'INTEGER', value: 3, defaultValue: 0 }, 201)
  await ok('PUT', '/api/flags/mobile/push?environment=production', { value: true }, 200)
  await ok('PUT', '/api/environments/production', { protected: true, requiredApprovals: 1 }, 200)
  // the admin holds flag:bypass: its writes to production below apply at once
  // a rollout running whenever the test runs: a window around any moment of the daemon's real clock
  const rollout = { variant: 'true', start: '2020-01-01T00:00:00.000Z', end: '2099-01-01T00:00:00.000Z', fromPercent: 5, toPercent: 100 }
  await ok('PUT', '/api/flags/promo/ramp?environment=production', { rollout }, 200)
  // staging differs from production on the two promo flags
  for (const name of ['promo/other', 'promo/ramp']) await ok('PUT', `/api/flags/${name}?environment=staging`, { value: true }, 200)
  await ok('PUT', '/api/flags/copy/limit?environment=staging', { value: 7 }, 200)
  for (const name of ['hist/requested', 'hist/bypassed']) {
    const on = await ok('PUT', `/api/flags/${name}?environment=production`, { value: true }, 200)
    revisionOf.set(name, ((await on.json()) as { revision: number }).revision)
    await ok('PUT', `/api/flags/${name}?environment=production`, { enabled: false }, 200)
  }
  for (const name of ['back/requested', 'back/bypassed']) {
    const four = await ok('PUT', `/api/flags/${name}?environment=staging`, { value: 4 }, 200)
    revisionOf.set(name, ((await four.json()) as { revision: number }).revision)
    // a shared field: it reaches production too
    await ok('PUT', `/api/flags/${name}?environment=staging`, { defaultValue: 5, value: 7 }, 200)
  }
  await ok('POST', '/api/users', { username: AUTHOR[0], password: AUTHOR[1], permissions: ['flag:read', 'flag:write'] }, 201)
})
const chromium = suite.chromium
const api = (method: string, path: string, body?: unknown) => suite.ui.api(method, path, body)
const read = async (env: string, name: string) =>
  (await (await api('GET', `/api/flags/${name}?environment=${env}`)).json()) as Record<string, unknown>
const valueIn = async (env: string, name: string) => (await read(env, name)).value
const status = async (name: string) => (await api('GET', `/api/flags/${name}`)).status
type Request = {
  id: string
  title: string
  description: string
  environment: string
  state: string
  changes: { flag: string; set: Record<string, unknown> }[]
}
const requestsFor = async (flag: string) => (await (await api('GET', `/api/change-requests?flag=${flag}`)).json()) as Request[]

/** Each person's tab: opened by the first test that needs it, kept for the file (closed with its browser context). */
const tabs = new Map<string, Promise<Page>>()

/**
 * `who`'s tab at the Flags page, laid out at `viewport`, with development chosen: what an earlier
 * test left (an open dialog, which is the app's over every page, another page, another environment,
 * which the browser context keeps: docs/ui.md#environments) is put back first. One tab a person
 * instead of a tab and a whole load a test.
 */
async function open(who: readonly [string, string] = ['admin', 'admin-password'], viewport = { width: 1280, height: 800 }) {
  let tab = tabs.get(who[0])
  if (!tab) {
    const { browser, d } = suite.ui
    tab = sessionOf(d.url, who[0], who[1]).then((token) => openSignedIn(browser, d.url, token, viewport))
    tabs.set(who[0], tab)
  }
  const p = await tab
  // headless Chromium runs animation frames (which waitForText and the app's rendering wait on) only
  // in the tab in front
  await p.bringToFront()
  if (await p.$('dialog[open]')) {
    await p.keyboard.press('Escape')
    await p.waitForSelector('dialog[open]', { hidden: true })
  }
  await p.setViewport(viewport)
  await visit(p, '')
  await p.waitForSelector('table.flag-table')
  await selectByLabel(p, 'Environment', 'development')
  return p
}

/** Goes to `path` below /ui/ inside the app, as its links do: no page load. */
async function visit(p: Page, path: string): Promise<void> {
  await p.evaluate(`history.pushState(null, '', ${JSON.stringify(`/ui/${path}`)}); dispatchEvent(new PopStateEvent('popstate'))`)
}

/** Goes to `name`'s page, with `env` chosen when given (its tab selected). */
async function flagPage(p: Page, name: string, env?: string): Promise<void> {
  await visit(p, `flags/${name}`)
  await p.waitForFunction((n) => document.querySelector('h1')?.textContent === n, {}, name)
  await p.waitForSelector('#f-default')
  if (!env) return
  await selectByLabel(p, 'Environment', env)
  await p.waitForFunction((e) => document.querySelector('[role="tab"][aria-selected="true"]')?.textContent?.includes(e), {}, env)
}

/** The open dialog's accessible name and role. */
const dialogOf = (p: Page) =>
  p.$eval(REVIEW_DIALOG, (d) => ({
    name: document.getElementById(d.getAttribute('aria-labelledby') ?? '')?.textContent ?? '',
    role: (d as unknown as { role?: string }).role ?? d.getAttribute('role') ?? d.tagName.toLowerCase(),
  }))
const dialogGone = (p: Page) => p.waitForFunction((s) => !document.querySelector(s), {}, REVIEW_DIALOG)
const applyNowTicked = (p: Page) => p.$eval('#review-apply-now', (b) => (b as unknown as { checked: boolean }).checked)

/** Toggles `flag`'s switch in production's column of the Flags table (development chosen): the review opens. */
async function toggleInProduction(p: Page, flag: string) {
  await p.waitForSelector(switchOf(`${flag} in production`))
  await p.click(switchOf(`${flag} in production`))
  return openedReview(p)
}

test.skipIf(!chromium)(
  "an author's switch in production is reviewed, then requested with its title and comment, and links to the request",
  async () => {
    const p = await open(AUTHOR)
    const review = await toggleInProduction(p, 'shop/dark_mode')
    expect(await dialogOf(p)).toEqual({ name: 'Review changes', role: 'dialog' })
    expect(review.text).toContain('value false → true')
    expect(review.text).not.toContain('Apply now without review')
    await fillByLabel(p, 'Title', 'Dark mode for everyone')
    await fillByLabel(p, 'Comment', 'Support asked for it')
    const href = await review.request()
    const [made] = await requestsFor('shop/dark_mode')
    expect(made).toMatchObject({ title: 'Dark mode for everyone', description: 'Support asked for it', state: 'open' })
    expect(made?.changes).toEqual([{ flag: 'shop/dark_mode', set: { value: true } }])
    expect(href).toBe(`/ui/change-requests/${made?.id}`)
    expect(await valueIn('production', 'shop/dark_mode')).toBe(false)
    await clickButton(p, 'Close')
    await dialogGone(p)
  },
)

test.skipIf(!chromium)('an admin holding flag:bypass requests by default, and applies at once only when ticking the box', async () => {
  const p = await open()
  const review = await toggleInProduction(p, 'shop/banner')
  expect(await applyNowTicked(p)).toBe(false)
  expect(review.text).toContain('Apply now without review')
  await review.request()
  expect((await requestsFor('shop/banner')).map((r) => r.state)).toEqual(['open'])
  expect(await valueIn('production', 'shop/banner')).toBe(false)
  await clickButton(p, 'Close')
  await dialogGone(p)

  await (await toggleInProduction(p, 'shop/banner')).applyNow()
  expect(await valueIn('production', 'shop/banner')).toBe(true)
  expect(await requestsFor('shop/banner')).toHaveLength(1)
})

test.skipIf(!chromium)('Escape cancels the review: nothing changes, and focus stays inside the dialog while it is open', async () => {
  const p = await open(AUTHOR)
  const before = (await (await api('GET', '/api/change-requests')).json()) as unknown[]
  await toggleInProduction(p, 'shop/other')
  for (let i = 0; i < 8; i++) {
    await p.keyboard.press('Tab')
    expect(await p.evaluate((s) => Boolean(document.querySelector(s)?.contains(document.activeElement)), REVIEW_DIALOG)).toBe(true)
  }
  await p.keyboard.press('Escape')
  await dialogGone(p)
  expect(await valueIn('production', 'shop/other')).toBe(false)
  expect((await (await api('GET', '/api/change-requests')).json()) as unknown[]).toHaveLength(before.length)
})

test.skipIf(!chromium)(
  'Compare leaves unticked a flag whose promotion would end a running rollout; a promotion is reviewed and requested',
  async () => {
    const p = await open(AUTHOR)
    await clickLink(p, 'Compare')
    await selectByLabel(p, 'From', 'staging')
    await selectByLabel(p, 'To', 'production')
    await fillByLabel(p, 'Names starting with', 'promo/')
    await clickButton(p, 'Show differences')
    await waitForText(p, 'Promote promo/ramp')
    await p.waitForFunction(
      () =>
        ![...document.querySelectorAll('label')].some(
          (l) => !l.textContent?.startsWith('Promote promo/') && l.textContent?.startsWith('Promote '),
        ),
    )
    const ticked = (label: string) =>
      p.evaluate((l) => {
        const id = [...document.querySelectorAll('label')].find((x) => x.textContent === l)?.htmlFor ?? ''
        return (document.getElementById(id) as unknown as { checked: boolean }).checked
      }, label)
    expect(await ticked('Promote promo/ramp')).toBe(false)
    expect(await ticked('Promote promo/other')).toBe(true)
    await waitForText(p, 'ends the rollout running in production')
    await clickEnabledButton(p, 'Promote')
    const review = await openedReview(p)
    expect(review.text).toContain('promo/other')
    expect(review.text).toContain('value false → true')
    expect(review.text).not.toContain('promo/ramp')
    await review.request()
    const [made] = await requestsFor('promo/other')
    expect(made?.changes).toEqual([{ flag: 'promo/other', set: { value: true } }])
    expect(await valueIn('production', 'promo/other')).toBe(false)
    expect(await requestsFor('promo/ramp')).toEqual([])
  },
)

test.skipIf(!chromium)('Copy from another environment into production is reviewed too, and requested', async () => {
  const p = await open(AUTHOR)
  await flagPage(p, 'copy/limit', 'production')
  await clickEnabledButton(p, 'Copy from staging')
  const review = await openedReview(p)
  expect(review.text).toContain('value 3 → 7')
  await review.request()
  const [made] = await requestsFor('copy/limit')
  expect(made?.changes).toEqual([{ flag: 'copy/limit', set: { value: 7 } }])
  expect(await valueIn('production', 'copy/limit')).toBe(3)
})

test.skipIf(!chromium)("a save on a flag's page is reviewed with the page's schedule, and requested for that time", async () => {
  const p = await open(AUTHOR)
  await flagPage(p, 'save/limit', 'production')
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
  const review = await openedReview(p)
  expect(review.text).toContain('value 3 → 5')
  expect(await p.$eval('#review-schedule', (i) => (i as unknown as { value: string }).value)).toBe(typed)
  await review.request()
  const [made] = (await requestsFor('save/limit')) as (Request & { scheduledAt: string })[]
  expect(made?.changes).toEqual([{ flag: 'save/limit', set: { value: 5 } }])
  expect(made?.scheduledAt).toBe(await p.evaluate((v) => new Date(v).toISOString(), typed))
  expect(await valueIn('production', 'save/limit')).toBe(3)
})

test.skipIf(!chromium)('the open dialog fits the window at 1440×900 and 390×844; Escape says nothing was changed', async () => {
  // axe-core on the open dialog at both widths: web-ui-everywhere.test.ts's sweep (Review changes over the Flags table)
  const p = await open(['admin', 'admin-password'], { width: 1440, height: 900 })
  await flagPage(p, 'shop/dark_mode', 'production')
  // the layout is CSS alone: one tab, laid out at both widths
  for (const viewport of [
    { width: 1440, height: 900 },
    { width: 390, height: 844 },
  ]) {
    await p.setViewport(viewport)
    await clickEnabledButton(p, 'Enabled')
    await openedReview(p)
    // the dialog fits the window's width, its own content included
    const fits = await p.$eval(REVIEW_DIALOG, (d) => d.getBoundingClientRect().right <= window.innerWidth && d.scrollWidth <= d.clientWidth)
    expect(fits).toBe(true)
    await p.keyboard.press('Escape')
    // the page hears that the review was cancelled, and keeps what it had
    await p.waitForFunction(() => document.querySelector('dialog') === null)
    await waitForText(p, 'review cancelled: nothing was changed')
    expect((await read('production', 'shop/dark_mode')).enabled).toBe(true)
  }
})

// docs/ui.md#review-before-protected-changes: a new user on a flag's production tab rolled back to
// revision 1 (its creation, an entry of every environment) and read "rolled back" while production
// still served the change: the rollback had gone to the default environment. A shared entry now
// restores into the environment the page shows, reviewed there when it is protected.
test.skipIf(!chromium)('rolling back to the creation from the production tab restores production, through its review', async () => {
  const p = await open(AUTHOR)
  await flagPage(p, 'mobile/push', 'production')
  await clickEnabledButton(p, 'Roll back to revision 1')
  await clickEnabledButton(p, 'Restore revision 1 now')
  const review = await openedReview(p)
  expect(review.text).toContain('value true → false')
  await review.request()
  const made = await requestsFor('mobile/push')
  expect(made.map((r) => [r.environment, r.state, r.changes[0]?.set.value])).toEqual([['production', 'open', false]])
})

/** On `name`'s page (with `env` chosen), asks to roll back to the revision kept for it: the review opens. */
async function rollBack(p: Page, name: string, env?: string) {
  const revision = revisionOf.get(name)
  await flagPage(p, name, env)
  await clickEnabledButton(p, `Roll back to revision ${revision}`)
  await clickEnabledButton(p, `Restore revision ${revision} now`)
  return openedReview(p)
}

test.skipIf(!chromium)("an author's rollback into production is reviewed, and requested rather than written", async () => {
  const p = await open(AUTHOR)
  const review = await rollBack(p, 'hist/requested')
  expect(review.text).toContain('Review changes')
  expect(review.text).toContain('enabled false → true')
  expect(review.text).not.toContain('Apply now without review')
  await review.request()
  const made = await requestsFor('hist/requested')
  expect(made.map((r) => [r.environment, r.state])).toEqual([['production', 'open']])
  expect(made[0]?.changes).toEqual([{ flag: 'hist/requested', set: { enabled: true } }])
  expect((await read('production', 'hist/requested')).enabled).toBe(false)
})

test.skipIf(!chromium)('a bypass holder ticking Apply now without review rolls back at once', async () => {
  const p = await open()
  await (await rollBack(p, 'hist/bypassed')).applyNow()
  await waitForText(p, `rolled back to revision ${revisionOf.get('hist/bypassed')}`)
  expect(await read('production', 'hist/bypassed')).toMatchObject({ enabled: true, value: true })
  expect(await requestsFor('hist/bypassed')).toEqual([])
})

test.skipIf(!chromium)(
  "an author's rollback in staging restoring the default value is reviewed; staging's part rolls back directly",
  async () => {
    const p = await open(AUTHOR)
    const review = await rollBack(p, 'back/requested', 'staging')
    expect(review.text).toContain('Review changes')
    expect(review.text).toContain('default value 5 → 0')
    expect(review.text).toContain('this change reaches production (protected), so it is requested in production')
    expect(review.text).toContain("staging's own changes (value) are saved directly")
    expect(review.text).not.toContain('Apply now without review')
    await review.request()
    const made = await requestsFor('back/requested')
    expect(made.map((r) => [r.environment, r.state])).toEqual([['production', 'open']])
    expect(made[0]?.changes).toEqual([{ flag: 'back/requested', set: { defaultValue: 0 } }])
    expect(await read('staging', 'back/requested')).toMatchObject({ value: 4, defaultValue: 5 })
    expect((await read('production', 'back/requested')).defaultValue).toBe(5)
  },
)

test.skipIf(!chromium)('a bypass holder rolls a shared field back at once only by ticking Apply now without review', async () => {
  const p = await open()
  const review = await rollBack(p, 'back/bypassed', 'staging')
  expect(await applyNowTicked(p)).toBe(false)
  expect(review.text).toContain('Apply now without review')
  await review.applyNow()
  await waitForText(p, `rolled back to revision ${revisionOf.get('back/bypassed')}`)
  expect(await read('staging', 'back/bypassed')).toMatchObject({ value: 4, defaultValue: 0 })
  expect((await read('production', 'back/bypassed')).defaultValue).toBe(0)
  expect(await requestsFor('back/bypassed')).toEqual([])
})

/** On `name`'s page, asks to delete or archive it (confirmed): the review opens. */
async function retire(p: Page, name: string, how: 'Delete' | 'Archive') {
  await flagPage(p, name)
  await clickEnabledButton(p, how)
  await clickEnabledButton(p, how === 'Delete' ? `Delete ${name} for good` : `Archive ${name}`)
  return openedReview(p)
}

test.skipIf(!chromium)("an author's delete while production is protected is reviewed and requested, not done", async () => {
  const p = await open(AUTHOR)
  const review = await retire(p, 'old/delete-asked', 'Delete')
  expect(review.text).toContain('Review changes')
  expect(review.text).toContain('delete the flag in every environment')
  expect(review.text).toContain('production (protected)')
  expect(review.text).not.toContain('Apply now without review')
  await review.request()
  const made = await requestsFor('old/delete-asked')
  expect(made.map((r) => [r.environment, r.state])).toEqual([['production', 'open']])
  expect(made[0]?.changes).toMatchObject([{ flag: 'old/delete-asked', delete: true }])
  expect(await status('old/delete-asked')).toBe(200)
  await clickButton(p, 'Close')
  await waitForText(p, 'change request made in production (open)')
})

test.skipIf(!chromium)("an author's archive while production is protected is requested as an archive", async () => {
  const p = await open(AUTHOR)
  const review = await retire(p, 'old/archive-asked', 'Archive')
  expect(review.text).toContain('archive the flag in every environment')
  await review.request()
  const made = await requestsFor('old/archive-asked')
  expect(made[0]?.changes).toMatchObject([{ flag: 'old/archive-asked', archive: true }])
  expect((await read('development', 'old/archive-asked')).archived).toBe(false)
})

test.skipIf(!chromium)('a bypass holder deletes and archives at once only by ticking Apply now without review', async () => {
  const p = await open()
  const archive = await retire(p, 'old/archive-now', 'Archive')
  expect(await applyNowTicked(p)).toBe(false)
  await archive.applyNow()
  await waitForText(p, 'old/archive-now archived')
  expect((await read('development', 'old/archive-now')).archived).toBe(true)
  await (await retire(p, 'old/delete-now', 'Delete')).applyNow()
  await p.waitForFunction(() => location.pathname === '/ui/' || location.pathname === '/ui')
  expect(await status('old/delete-now')).toBe(404)
  for (const name of ['old/archive-now', 'old/delete-now']) expect(await requestsFor(name)).toEqual([])
})
