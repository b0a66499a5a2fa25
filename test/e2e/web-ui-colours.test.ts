/**
 * docs/ui.md#colours in Chromium: each environment's colour beside its name in the switcher, the
 * Environments page and a flag's environments table (from `--env-<name>` on `:root`), a colour
 * changed through the API shown after a reload, destructive buttons outlined until their
 * confirmation, and axe-core clean on those screens.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { allViolations, clickButton, clickLink, selectByLabel, visit, waitForText } from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

/** The browser's, inside page functions (the test project's types have no DOM). */
declare const document: {
  documentElement: unknown
  body: { append(e: unknown): void }
  createElement(tag: string): { style: { color: string }; remove(): void }
  querySelector(selector: string): unknown
  querySelectorAll(selector: string): { length: number }
}
declare const getComputedStyle: (e: unknown) => {
  color: string
  backgroundColor: string
  borderTopColor: string
  getPropertyValue(name: string): string
}

setDefaultTimeout(60_000)
const suite = browserSuite('ui-colours', async (ui) => {
  for (const [env, body] of [
    ['staging', {}],
    ['production', { protected: true, requiredApprovals: 1 }],
    ['qa', { color: 'teal' }],
  ] as const)
    expect((await ui.api('PUT', `/api/environments/${env}`, body)).status).toBe(201)
  await ui.api('POST', '/api/flags', { name: 'shop/limit', type: 'INTEGER', value: 3 })
  await ui.api('POST', '/api/users', { username: 'bob', password: 'bob-password-1', permissions: ['flag:read'] })
})
const chromium = suite.chromium

/** A colour as the browser computes it (`rgb(…)`), to compare with what a page shows. */
const computed = (p: Page, colour: string) =>
  p.evaluate((c) => {
    const probe = document.createElement('i')
    probe.style.color = c
    document.body.append(probe)
    const shown = getComputedStyle(probe).color
    probe.remove()
    return shown
  }, colour)

/** The background colour of the `n`th swatch inside `selector`. */
const swatchIn = (p: Page, selector: string) => p.$eval(`${selector} .env-swatch`, (s) => getComputedStyle(s as never).backgroundColor)

/** The computed colours of the button named `name`. */
const buttonColours = (p: Page, name: string) =>
  p.$$eval(
    'button',
    (buttons, wanted) => {
      const b = buttons.find((x) => (x.getAttribute('aria-label') ?? x.textContent?.trim()) === wanted)
      if (!b) return undefined
      const s = getComputedStyle(b)
      return { background: s.backgroundColor, color: s.color, border: s.borderTopColor }
    },
    name,
  )

test.skipIf(!chromium)("the switcher shows the chosen environment's colour beside its name; :root holds every one", async () => {
  const p = await suite.open()
  await p.waitForSelector('#environment')
  await p.waitForSelector('.environment-switch .env-swatch')
  const root = await p.evaluate(() =>
    ['development', 'staging', 'production', 'qa'].map((e) =>
      getComputedStyle(document.documentElement).getPropertyValue(`--env-${e}`).trim(),
    ),
  )
  expect(root).toEqual(['#6b7280', '#b45309', '#b91c1c', 'teal'])
  expect(await swatchIn(p, '.environment-switch')).toBe(await computed(p, '#6b7280'))
  await selectByLabel(p, 'Environment', 'production')
  await p.waitForFunction(
    (want) => getComputedStyle(document.querySelector('.environment-switch .env-swatch') as never).backgroundColor === want,
    {},
    await computed(p, '#b91c1c'),
  )
  // never the only signal: the name is in the switcher, the swatch is hidden from assistive technology
  expect(
    await p.$eval(
      '#environment',
      (s) => (s as unknown as { selectedOptions: { textContent: string | null }[] }).selectedOptions[0]?.textContent,
    ),
  ).toContain('production')
  expect(await p.$eval('.environment-switch .env-swatch', (s) => s.getAttribute('aria-hidden'))).toBe('true')
  // the Flags page's any-impact check comes with its table (a page heading); nothing serious here
  expect(await allViolations(p)).toEqual([])
  await selectByLabel(p, 'Environment', 'development')
})

test.skipIf(!chromium)(
  'the Environments page and a flag page show each colour; a colour changed through the API shows after a reload',
  async () => {
    const p = await suite.open()
    await clickLink(p, 'Environments')
    await waitForText(p, 'protected, 1 approval')
    const rows = () =>
      p.$$eval('tbody tr', (trs) =>
        trs.map((tr) => [
          tr.querySelector('th')?.textContent?.trim(),
          getComputedStyle(tr.querySelector('.env-swatch') as never).backgroundColor,
        ]),
      )
    expect(await rows()).toEqual([
      ['development', await computed(p, '#6b7280')],
      ['staging', await computed(p, '#b45309')],
      ['production', await computed(p, '#b91c1c')],
      ['qa', await computed(p, 'teal')],
    ])
    expect(await allViolations(p)).toEqual([])
    expect((await suite.ui.api('PUT', '/api/environments/staging', { color: 'rebeccapurple' })).status).toBe(200)
    await p.reload()
    await waitForText(p, 'protected, 1 approval')
    expect((await rows())[1]).toEqual(['staging', await computed(p, 'rebeccapurple')])
    await visit(p, `${suite.ui.d.url}/ui/flags/shop/limit`)
    await waitForText(p, '(shown below)')
    const headers = await p.$$eval('th[scope="col"] .env-swatch', (s) => s.map((x) => getComputedStyle(x).backgroundColor))
    expect(headers).toContain(await computed(p, 'rebeccapurple'))
    expect(headers).toContain(await computed(p, 'teal'))
    expect((await suite.ui.api('PUT', '/api/environments/staging', { color: null })).status).toBe(200)
  },
)

test.skipIf(!chromium)("the Flags table's column headers and a flag's history badges carry each environment's colour", async () => {
  const p = await suite.open('admin', 'admin-password', { width: 1440, height: 900 })
  await p.waitForSelector('tr[data-flag="shop/limit"]')
  // the other environments' columns load after the chosen one's: wait for the last of them
  await p.waitForFunction(() => document.querySelectorAll('thead th.env-head .env-swatch').length === 4)
  const heads = await p.$$eval('thead th.env-head', (ths) =>
    ths.map((th) => [
      th.querySelector('.env-name')?.textContent,
      th.querySelector('.env-swatch') ? getComputedStyle(th.querySelector('.env-swatch') as never).backgroundColor : null,
    ]),
  )
  expect(heads).toEqual([
    ['development', await computed(p, '#6b7280')],
    ['staging', await computed(p, '#b45309')],
    ['production', await computed(p, '#b91c1c')],
    ['qa', await computed(p, 'teal')],
  ])
  expect(await suite.ui.api('PUT', '/api/flags/shop/limit?environment=production', { value: 4 })).toHaveProperty('status', 200)
  await visit(p, `${suite.ui.d.url}/ui/flags/shop/limit`)
  await waitForText(p, 'in production')
  const badge = await p.$$eval('.history .chip.env', (chips) =>
    chips.map((c) => [
      c.textContent,
      c.querySelector('.env-swatch') ? getComputedStyle(c.querySelector('.env-swatch') as never).backgroundColor : null,
    ]),
  )
  expect(badge).toContainEqual(['in production', await computed(p, '#b91c1c')])
  expect(await allViolations(p)).toEqual([])
  // Compare's columns are named after the two environments (it opens toward production, from staging)
  await visit(p, `${suite.ui.d.url}/ui/compare`)
  await clickButton(p, 'Show differences')
  await p.waitForSelector('table.differences')
  const compared = await p.$$eval('table.differences thead th .env-swatch', (s) => s.map((x) => getComputedStyle(x).backgroundColor))
  expect(compared).toEqual([await computed(p, '#b45309'), await computed(p, '#b91c1c')]) // staging to production
})

test.skipIf(!chromium)('a destructive button is outlined until its confirmation step, which is filled', async () => {
  const p = await suite.open()
  await clickLink(p, 'Users')
  await waitForText(p, 'Delete bob')
  const [surface, danger] = await Promise.all([computed(p, '#fff'), computed(p, '#b4232c')])
  expect(await buttonColours(p, 'Delete bob')).toEqual({ background: surface, color: danger, border: danger })
  expect(await allViolations(p)).toEqual([])
  await clickButton(p, 'Delete bob')
  await waitForText(p, 'Delete bob for good')
  expect((await buttonColours(p, 'Delete bob for good'))?.background).toBe(danger)
  expect(await allViolations(p)).toEqual([])
  await clickButton(p, 'Keep it')
  await waitForText(p, 'Delete bob')
})
