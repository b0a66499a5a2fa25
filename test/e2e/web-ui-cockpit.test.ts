/**
 * docs/ui.md#the-flags-table in Chromium: the Flags page as one table of about 60 flags in groups,
 * a column per environment (production protected), each value in its cell's words, and its sizes at
 * a desktop, a laptop and a phone width; axe-core on it at 1440 px (at 390 px, and the shortcuts
 * dialog: web-ui-everywhere.test.ts). The tests that only read the table share one tab.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import {
  allViolations,
  checkByLabel,
  clickButton,
  fillByLabel,
  layoutWidth,
  openSignedIn,
  selectByLabel,
  sessionOf,
  switchOf,
  waitForSwitch,
} from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

setDefaultTimeout(90_000)
const GROUPS = ['checkout', 'search', 'profile', 'billing', 'ops', 'growth']
const suite = browserSuite('ui-cockpit', async (ui) => {
  expect((await ui.api('PUT', '/api/environments/staging', { description: 'the staging one' })).status).toBe(201)
  expect((await ui.api('PUT', '/api/environments/production', { protected: true, requiredApprovals: 2 })).status).toBe(201)
  for (const g of GROUPS)
    for (let i = 0; i < 10; i++)
      expect(
        (
          await ui.api('POST', '/api/flags', {
            name: `${g}/flag_${i}`,
            type: 'BOOLEAN',
            value: i % 2 === 0,
            description: `${g} switch ${i}`,
          })
        ).status,
      ).toBe(201)
  const made = [
    { name: 'cells/banner', type: 'STRING', value: 'a welcome banner far longer than a cell holds' },
    { name: 'cells/limits', type: 'OBJECT', value: { a: 1, b: 2, c: 3 } },
    { name: 'cells/off', type: 'INTEGER', value: 3, enabled: false },
    // a window around any moment the test runs in: the rollout runs
    {
      name: 'cells/ramp',
      type: 'BOOLEAN',
      value: false,
      rollout: { variant: 'true', start: '2020-01-01T00:00:00Z', end: '2099-01-01T00:00:00Z', fromPercent: 0, toPercent: 100 },
    },
  ]
  for (const f of made) expect((await ui.api('POST', '/api/flags', f)).status).toBe(201)
  const request = await ui.api('POST', '/api/change-requests', {
    environment: 'production',
    title: 'Turn on checkout 1',
    changes: [{ flag: 'checkout/flag_1', set: { value: true } }],
  })
  expect(request.status).toBe(201)
  // another person's request the admin may approve: the one `Needs your review` counts
  const dev = { username: 'dev', password: 'dev-password-1', permissions: ['flag:read', 'flag:write'] }
  expect((await ui.api('POST', '/api/users', dev)).status).toBe(201)
  const devToken = await sessionOf(ui.d.url, dev.username, dev.password)
  const devs = await ui.api(
    'POST',
    '/api/change-requests',
    { environment: 'production', title: 'A shorter banner', changes: [{ flag: 'cells/banner', set: { value: 'hi' } }] },
    devToken,
  )
  expect(devs.status).toBe(201)
})
const chromium = suite.chromium

/**
 * One tab at 1440×900 on the Flags page, for the tests that read the table and leave it as they
 * found it (a tab and a load of the 64-flag table each cost Chromium about a CPU-second): opened by
 * whichever of them runs first, closed with the file.
 */
let shared: Promise<Page> | undefined
function readingTab(): Promise<Page> {
  shared ??= (async () => {
    const { browser, d } = suite.ui
    const p = await openSignedIn(browser, d.url, await sessionOf(d.url, 'admin', 'admin-password'), { width: 1440, height: 900 })
    await p.waitForSelector('tr[data-flag="cells/ramp"] td[data-environment="production"]')
    return p
  })()
  return shared
}
afterAll(async () => {
  await (await shared)?.close().catch(() => {})
})

/** The text of flag `name`'s cell in `env`. */
const cellOf = (p: Page, name: string, env: string) =>
  p.$eval(`tr[data-flag="${name}"] td[data-environment="${env}"]`, (td) => ({
    text: td.textContent ?? '',
    title: td.querySelector('.value')?.getAttribute('title') ?? null,
  }))

test.skipIf(!chromium)('the Flags page is a table with a column per environment; each value reads in its cell', async () => {
  const p = await readingTab()
  expect(await p.$eval('h1', (h) => h.textContent)).toBe('Flags')
  const heads = await p.$$eval('table.flag-table thead th', (ths) => ths.map((th) => th.textContent ?? ''))
  expect(heads.slice(0, 3)).toEqual(['Name', 'Type', 'Targeting'])
  expect(heads).toContain('production protected · 2')
  expect(heads.slice(-2)).toEqual(['Uses (7 days)', 'Last changed'])
  expect(await p.$eval('[role="table"], table', (t) => t.tagName)).toBe('TABLE')
  // a switch per environment, named after the flag and the environment
  for (const env of ['development', 'staging', 'production']) await p.waitForSelector(switchOf(`checkout/flag_0 in ${env}`))
  const banner = await cellOf(p, 'cells/banner', 'development')
  expect(banner.text.length).toBeLessThanOrEqual(24)
  expect(banner.title).toBe('"a welcome banner far longer than a cell holds"')
  expect((await cellOf(p, 'cells/limits', 'staging')).text).toBe('{…} 3 keys')
  expect((await cellOf(p, 'cells/off', 'development')).text).toContain('off')
  expect((await cellOf(p, 'cells/ramp', 'development')).text).toMatch(/\d+%$/)
  expect((await cellOf(p, 'checkout/flag_1', 'production')).text).toContain('pending')
  expect((await cellOf(p, 'checkout/flag_1', 'staging')).text).not.toContain('pending')
  // a long value leaves its chips in sight
  const chip = await p.$eval(`tr[data-flag="cells/banner"] td[data-environment="production"]`, (td) => {
    const pending = td.querySelector('.chip.pending')?.getBoundingClientRect()
    return pending !== undefined && pending.width > 0 && pending.right <= td.getBoundingClientRect().right
  })
  expect(chip).toBe(true)
  // groups are rows that close and open
  await p.click('tr[data-group="checkout"] button')
  await p.waitForFunction(`document.querySelector('tr[data-flag="checkout/flag_0"]')?.checkVisibility() === false`)
  await p.click('tr[data-group="checkout"] button')
  await p.waitForFunction(`document.querySelector('tr[data-flag="checkout/flag_0"]')?.checkVisibility() === true`)
  expect(await allViolations(p)).toEqual([])
})

test.skipIf(!chromium)('at 1440×900 at least 14 flag rows show above the fold, each at most 56 px tall, names 160 px wide', async () => {
  const p = await readingTab()
  const rows = await p.$$eval('tr.flag', (trs) =>
    trs.map((tr) => {
      const box = tr.getBoundingClientRect()
      return { bottom: box.bottom, height: box.height, name: tr.querySelector('th.what')?.getBoundingClientRect().width ?? 0 }
    }),
  )
  expect(rows.length).toBeGreaterThanOrEqual(60)
  const fold = (await p.evaluate('window.innerHeight')) as number
  expect(rows.filter((r) => r.bottom <= fold).length).toBeGreaterThanOrEqual(14)
  expect(Math.max(...rows.map((r) => r.height))).toBeLessThanOrEqual(56)
  expect(Math.min(...rows.map((r) => r.name))).toBeGreaterThanOrEqual(160)
  expect(await layoutWidth(p)).toBeLessThanOrEqual(1440)
  // the counters and every filter fit the width: the filters on one line
  await p.waitForFunction(`[...document.querySelectorAll('.counters a')].every((a) => /^\\d+ /.test(a.textContent))`)
  const tops = await p.$$eval('.list-filters > *', (fields) => fields.map((f) => Math.round(f.getBoundingClientRect().top)))
  expect(tops.length).toBeGreaterThanOrEqual(10)
  expect(Math.max(...tops) - Math.min(...tops)).toBeLessThanOrEqual(8)
  const strip = await p.$$eval('.counters a', (as) => as.map((a) => Math.round(a.getBoundingClientRect().top)))
  expect(new Set(strip).size).toBe(1)
})

test.skipIf(!chromium)('no sideways scroll at 1280 px with 5 environments, nor at 390×844', async () => {
  for (const env of ['qa', 'canary'])
    expect((await suite.ui.api('PUT', `/api/environments/${env}`, { description: `the ${env} one` })).status).toBe(201)
  try {
    const phone = await suite.open('admin', 'admin-password', { width: 1280, height: 800 })
    await phone.waitForSelector('tr[data-flag="cells/ramp"] td[data-environment="canary"]')
    expect(await layoutWidth(phone)).toBeLessThanOrEqual(1280)
    // the layout is CSS alone: the same tab laid out at a phone's width
    await phone.setViewport({ width: 390, height: 844 })
    await phone.waitForFunction('innerWidth === 390')
    expect(await layoutWidth(phone)).toBeLessThanOrEqual(390)
    // the chosen environment's cell holds its whole switch, though group rows span the hidden columns too
    const fits = await phone.$eval(`tr[data-flag="checkout/flag_0"] td.env-cell.chosen`, (td) => {
      const cell = td.getBoundingClientRect()
      const toggle = td.querySelector('[role="switch"]')?.getBoundingClientRect()
      return toggle !== undefined && toggle.width > 0 && toggle.right <= cell.right
    })
    expect(fits).toBe(true)
  } finally {
    for (const env of ['qa', 'canary']) await suite.ui.api('DELETE', `/api/environments/${env}`)
  }
})

/** The flags the table shows, by name. */
const shownFlags = (p: Page) => p.$$eval('tr.flag[data-flag]', (trs) => trs.map((tr) => tr.getAttribute('data-flag') ?? ''))

test.skipIf(!chromium)('filters are kept in the address: a new tab opens the same filtered view after its sign-in', async () => {
  const p = await suite.open('admin', 'admin-password', { width: 1440, height: 900 })
  await p.waitForSelector('tr[data-flag="cells/ramp"]')
  await checkByLabel(p, 'Rolling out', true)
  await p.waitForFunction(`document.querySelectorAll('tr.flag').length === 1`)
  expect(await shownFlags(p)).toEqual(['cells/ramp'])
  await checkByLabel(p, 'Rolling out', false)
  await selectByLabel(p, 'Type', 'BOOLEAN')
  await selectByLabel(p, 'Environment', 'production')
  await checkByLabel(p, 'Pending review', true)
  await p.waitForFunction(`document.querySelectorAll('tr.flag').length === 1`)
  expect(await shownFlags(p)).toEqual(['checkout/flag_1'])
  const address = (await p.evaluate('location.href')) as string
  expect(new URL(address).searchParams.get('pending')).toBe('true')
  expect(new URL(address).searchParams.get('type')).toBe('BOOLEAN')
  // a new tab has no session: it asks for sign-in, then shows the view the address names
  const tab = await suite.ui.browser.newPage()
  await tab.setViewport({ width: 1440, height: 900 })
  await tab.goto(address)
  await fillByLabel(tab, 'Username', 'admin')
  await fillByLabel(tab, 'Password', 'admin-password')
  await clickButton(tab, 'Sign in')
  await tab.waitForFunction(`document.querySelectorAll('tr.flag').length === 1`)
  expect(await shownFlags(tab)).toEqual(['checkout/flag_1'])
  expect(await tab.evaluate('location.href')).toBe(address)
  await tab.close()
  await selectByLabel(p, 'Environment', 'development')
})

/** The counters' accessible names, in order. */
const counterNames = (p: Page) => p.$$eval('.counters a', (as) => as.map((a) => (a.textContent ?? '').replace(/\s+/g, ' ').trim()))

test.skipIf(!chromium)('four counters above the table, each a link to the table filtered by it', async () => {
  const p = await suite.open('admin', 'admin-password', { width: 1440, height: 900 })
  await p.waitForSelector('tr[data-flag="cells/ramp"]')
  await p.waitForFunction(`[...document.querySelectorAll('.counters a')].every((a) => /^\\d+ /.test(a.textContent))`)
  // the admin's own request is not theirs to review; dev's is
  expect(await counterNames(p)).toEqual(['1 Needs your review', '1 Rolling out', '64 Changed in 24 h', '0 Stale'])
  const follow = async (counter: string, search: string, rows: number) => {
    await p.click(`.counters a[data-counter="${counter}"]`)
    await p.waitForFunction(`location.search === '${search}' && document.querySelectorAll('tr.flag').length === ${rows}`)
  }
  await follow('review', '?review=true', 1)
  expect(await shownFlags(p)).toEqual(['cells/banner'])
  expect(await p.$eval('#filter-review', (box) => (box as unknown as { checked: boolean }).checked)).toBe(true)
  await follow('rolling', '?rolling=true', 1)
  expect(await shownFlags(p)).toEqual(['cells/ramp'])
  await follow('changed', '?changed=24h', 64)
  await p.click('.counters a[data-counter="stale"]')
  await p.waitForFunction(`location.search === '?state=stale'`)
  await p.waitForSelector('tr.flag', { hidden: true })
  expect(await p.$eval('#filter-state', (s) => (s as unknown as { value: string }).value)).toBe('stale')
})

test.skipIf(!chromium)('Changed in 24 h counts by the browser clock: a day and more later nothing changed lately', async () => {
  const tab = suite.track(await suite.ui.browser.newPage())
  await tab.evaluateOnNewDocument(() => {
    const real = Date.now
    Date.now = () => real() + 25 * 3_600_000
  })
  await tab.setViewport({ width: 1440, height: 900 })
  await tab.goto(`${suite.ui.d.url}/ui/`)
  await fillByLabel(tab, 'Username', 'admin')
  await fillByLabel(tab, 'Password', 'admin-password')
  await clickButton(tab, 'Sign in')
  await tab.waitForSelector('tr[data-flag="cells/ramp"]')
  await tab.waitForFunction(`[...document.querySelectorAll('.counters a')].every((a) => /^\\d+ /.test(a.textContent))`)
  expect((await counterNames(tab))[2]).toBe('0 Changed in 24 h')
})

test.skipIf(!chromium)('keyboard: ? lists the shortcuts, / searches, j and k move between rows, t toggles the switch', async () => {
  const p = await suite.open('admin', 'admin-password', { width: 1440, height: 900 })
  await p.waitForSelector('tr[data-flag="cells/ramp"]')
  // ? opens a named dialog; Escape closes it and focus goes back
  await p.focus('a.archived-link')
  await p.keyboard.type('?')
  const dialog = await p.waitForSelector('dialog[open]')
  expect(
    await p.evaluate(`document.getElementById(document.querySelector('dialog[open]').getAttribute('aria-labelledby')).textContent`),
  ).toBe('Keyboard shortcuts')
  expect(await dialog!.evaluate((d) => d.textContent)).toContain('j')
  await p.keyboard.press('Escape')
  await p.waitForSelector('dialog[open]', { hidden: true })
  expect(await p.evaluate('document.activeElement?.className')).toBe('archived-link')
  // / focuses the search; keys typed there are text
  await p.keyboard.type('/')
  expect(await p.evaluate('document.activeElement?.id')).toBe('search')
  await p.keyboard.type('jk')
  // the list re-renders as each letter filters it: wait for the field to show both
  await p.waitForFunction(`document.getElementById('search').value === 'jk'`)
  await fillByLabel(p, 'Search flags', '')
  await p.evaluate('document.activeElement.blur()')
  const focused = () => p.evaluate(`document.activeElement?.getAttribute('data-flag') ?? null`)
  const visible = (await p.evaluate(
    `[...document.querySelectorAll('tr.flag')].filter((tr) => !tr.hidden).map((tr) => tr.getAttribute('data-flag'))`,
  )) as string[]
  await p.keyboard.press('j')
  expect(await focused()).toBe(visible[0] ?? '')
  await p.keyboard.press('j')
  await p.keyboard.press('j')
  await p.keyboard.press('k')
  expect(await focused()).toBe(visible[1] ?? '')
  expect(await p.evaluate('getComputedStyle(document.activeElement).outlineStyle')).not.toBe('none')
  // with a modifier the key is the browser's
  await p.keyboard.down('Control')
  await p.keyboard.press('j')
  await p.keyboard.up('Control')
  expect(await focused()).toBe(visible[1] ?? '')
  // t clicks the focused row's switch in the chosen environment (development)
  const name = visible[1] as string
  const was = await p.$eval(switchOf(`${name} in development`), (s) => s.getAttribute('aria-checked') === 'true')
  await p.keyboard.press('t')
  await waitForSwitch(p, `${name} in development`, !was)
  const stored = (await (await suite.ui.api('GET', `/api/flags/${name}`)).json()) as { value: boolean }
  expect(stored.value).toBe(!was)
  await p.keyboard.press('t')
  await waitForSwitch(p, `${name} in development`, was)
  // ? works on every page (reached in-app, as its link does)
  await p.evaluate(`history.pushState(null, '', '/ui/change-requests'); dispatchEvent(new PopStateEvent('popstate'))`)
  await p.waitForFunction(`document.querySelector('h1')?.textContent === 'Change requests'`)
  await p.keyboard.type('?')
  await p.waitForSelector('dialog[open]')
})

test.skipIf(!chromium)('a pending mark names its flag and environment, its visible word first', async () => {
  const p = await readingTab()
  // every mark reads "pending": its name says which request it opens (docs/ui.md#the-flags-table)
  const mark = 'tr[data-flag="checkout/flag_1"] td[data-environment="production"] a.pending'
  await p.waitForSelector(mark)
  expect(await p.$eval(mark, (a) => a.getAttribute('aria-label'))).toBe('pending: the change request for checkout/flag_1 in production')
})

test.skipIf(!chromium)('a search survives switching the environment', async () => {
  const p = await suite.open('admin', 'admin-password', { width: 1440, height: 900 })
  await p.waitForSelector('tr[data-flag="cells/ramp"]')
  await fillByLabel(p, 'Search flags', 'flag_3')
  await p.waitForFunction(`document.querySelectorAll('tr.flag').length === ${GROUPS.length}`)
  // comparing environments keeps what was typed (docs/ui.md#the-flags-table)
  await selectByLabel(p, 'Environment', 'production')
  await p.waitForSelector('td.env-cell.chosen[data-environment="production"]')
  try {
    expect(await p.$eval('#search', (s) => (s as unknown as { value: string }).value)).toBe('flag_3')
    expect(await p.$$eval('tr.flag', (trs) => trs.length)).toBe(GROUPS.length)
  } finally {
    // the browser remembers the environment for the next test
    await selectByLabel(p, 'Environment', 'development')
  }
})
