/**
 * docs/ui.md#the-flags-table in Chromium: the Flags page as one table of about 60 flags in groups,
 * a column per environment (production protected), each value in its cell's words, and its sizes at
 * a desktop, a laptop and a phone width; axe-core on it.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { allViolations, checkByLabel, clickButton, fillByLabel, layoutWidth, selectByLabel, switchOf } from '../helpers/ui-driver.ts'
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
})
const chromium = suite.chromium

/** The text of flag `name`'s cell in `env`. */
const cellOf = (p: Page, name: string, env: string) =>
  p.$eval(`tr[data-flag="${name}"] td[data-environment="${env}"]`, (td) => ({
    text: td.textContent ?? '',
    title: td.querySelector('.value')?.getAttribute('title') ?? null,
  }))

test.skipIf(!chromium)('the Flags page is a table with a column per environment; each value reads in its cell', async () => {
  const p = await suite.open('admin', 'admin-password', { width: 1440, height: 900 })
  await p.waitForSelector('tr[data-flag="cells/ramp"] td[data-environment="production"]')
  expect(await p.$eval('h1', (h) => h.textContent)).toBe('Flags')
  const heads = await p.$$eval('table.flag-table thead th', (ths) => ths.map((th) => th.textContent ?? ''))
  expect(heads.slice(0, 3)).toEqual(['Name', 'Type', 'Targeting'])
  expect(heads).toContain('production protected · 2')
  expect(heads.slice(-2)).toEqual(['Uses (30 days)', 'Last changed'])
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
  // groups are rows that close and open
  await p.click('tr[data-group="checkout"] button')
  await p.waitForFunction(`document.querySelector('tr[data-flag="checkout/flag_0"]')?.checkVisibility() === false`)
  await p.click('tr[data-group="checkout"] button')
  await p.waitForFunction(`document.querySelector('tr[data-flag="checkout/flag_0"]')?.checkVisibility() === true`)
  expect(await allViolations(p)).toEqual([])
})

test.skipIf(!chromium)('at 1440×900 at least 14 flag rows show above the fold, each at most 56 px tall, names 160 px wide', async () => {
  const p = await suite.open('admin', 'admin-password', { width: 1440, height: 900 })
  await p.waitForSelector('tr[data-flag="cells/ramp"] td[data-environment="production"]')
  const rows = await p.$$eval('tr.flag', (trs) =>
    trs.map((tr) => {
      const box = tr.getBoundingClientRect()
      return { bottom: box.bottom, height: box.height, name: tr.querySelector('th.what')?.getBoundingClientRect().width ?? 0 }
    }),
  )
  expect(rows.length).toBeGreaterThanOrEqual(60)
  expect(rows.filter((r) => r.bottom <= 900).length).toBeGreaterThanOrEqual(14)
  expect(Math.max(...rows.map((r) => r.height))).toBeLessThanOrEqual(56)
  expect(Math.min(...rows.map((r) => r.name))).toBeGreaterThanOrEqual(160)
  expect(await layoutWidth(p)).toBeLessThanOrEqual(1440)
})

test.skipIf(!chromium)('no sideways scroll at 1280 px with 5 environments, nor at 390×844; axe-core clean on a phone', async () => {
  for (const env of ['qa', 'canary'])
    expect((await suite.ui.api('PUT', `/api/environments/${env}`, { description: `the ${env} one` })).status).toBe(201)
  try {
    const p = await suite.open('admin', 'admin-password', { width: 1280, height: 800 })
    await p.waitForSelector('tr[data-flag="cells/ramp"] td[data-environment="canary"]')
    expect(await layoutWidth(p)).toBeLessThanOrEqual(1280)
    const phone = await suite.open('admin', 'admin-password', { width: 390, height: 844 })
    await phone.waitForSelector('tr[data-flag="cells/ramp"] td[data-environment="canary"]')
    expect(await layoutWidth(phone)).toBeLessThanOrEqual(390)
    expect(await allViolations(phone)).toEqual([])
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
