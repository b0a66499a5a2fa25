/**
 * docs/ui.md#environments in Chromium: the `Environment` switcher (remembered in the browser), a
 * column per environment in the flag list with its own switch, a flag's environments side by side
 * with "Copy from", the Compare page that promotes after showing the differences, the Environments
 * page, and permissions for one environment in the users' form; axe-core on the new screens.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import {
  allViolations,
  bodyText,
  checkByLabel,
  clickButton,
  clickLink,
  fillByLabel,
  selectByLabel,
  visit,
  waitForSwitch,
  waitForText,
} from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

setDefaultTimeout(60_000)
const suite = browserSuite('ui-environments', async (ui) => {
  // the daemon's default environment is development (config environment's default)
  for (const env of ['staging', 'production'])
    expect((await ui.api('PUT', `/api/environments/${env}`, { description: `the ${env} one` })).status).toBe(201)
  await ui.api('POST', '/api/flags', { name: 'shop/dark_mode', type: 'BOOLEAN', value: false })
  await ui.api('POST', '/api/flags', { name: 'shop/limit', type: 'INTEGER', value: 3 })
})
const chromium = suite.chromium
const api = (method: string, path: string, body?: unknown, token?: string) => suite.ui.api(method, path, body, token)
const valueIn = async (env: string, name: string) =>
  ((await (await api('GET', `/api/flags/${name}?environment=${env}`)).json()) as { value: unknown }).value
const selected = (p: Awaited<ReturnType<typeof suite.open>>) => p.$eval('#environment', (s) => (s as unknown as { value: string }).value)

test.skipIf(!chromium)('a column per environment, each with its switch; the Environment switcher is remembered', async () => {
  const p = await suite.open()
  await waitForSwitch(p, 'shop/dark_mode in staging', false)
  await clickButton(p, 'shop/dark_mode in staging')
  await waitForSwitch(p, 'shop/dark_mode in staging', true)
  expect(await valueIn('staging', 'shop/dark_mode')).toBe(true)
  expect(await valueIn('development', 'shop/dark_mode')).toBe(false)
  await selectByLabel(p, 'Environment', 'staging')
  // staging is the chosen one now: its switch is the flag's own, development has a column
  await waitForSwitch(p, 'shop/dark_mode in staging', true)
  await waitForSwitch(p, 'shop/dark_mode in development', false)
  await p.reload()
  await waitForSwitch(p, 'shop/dark_mode in staging', true)
  expect(await selected(p)).toBe('staging')
  expect(await allViolations(p)).toEqual([])
  await selectByLabel(p, 'Environment', 'development')
  await waitForSwitch(p, 'shop/dark_mode in development', false)
})

test.skipIf(!chromium)("a flag's page shows every environment side by side and copies one's state into the chosen one", async () => {
  expect((await api('PUT', '/api/flags/shop/limit?environment=staging', { value: 7 })).status).toBe(200)
  const p = await suite.open()
  await selectByLabel(p, 'Environment', 'production')
  await visit(p, `${suite.ui.d.url}/ui/flags/shop/limit`)
  await waitForText(p, 'production (shown below)')
  const text = await bodyText(p)
  expect(text).toContain('staging')
  expect(text).toContain('7')
  await clickButton(p, 'Copy from staging')
  await waitForText(p, "copied staging's state into production")
  expect(await valueIn('production', 'shop/limit')).toBe(7)
  expect(await valueIn('development', 'shop/limit')).toBe(3)
  expect(await allViolations(p)).toEqual([])
  await selectByLabel(p, 'Environment', 'development')
})

test.skipIf(!chromium)('Compare shows the differences, then Promote copies the ticked flags in one go', async () => {
  expect((await api('PUT', '/api/flags/shop/dark_mode?environment=staging', { value: true })).status).toBe(200)
  expect((await api('PUT', '/api/flags/shop/limit?environment=staging', { value: 9 })).status).toBe(200)
  const p = await suite.open()
  await clickLink(p, 'Compare')
  await selectByLabel(p, 'From', 'staging')
  await selectByLabel(p, 'To', 'production')
  await waitForText(p, 'between staging and production')
  await waitForText(p, 'Promote shop/dark_mode')
  expect(await allViolations(p)).toEqual([])
  await checkByLabel(p, 'Promote shop/limit', false)
  await clickButton(p, 'Promote')
  await waitForText(p, 'promoted 1 flag from staging to production')
  expect(await valueIn('production', 'shop/dark_mode')).toBe(true)
  expect(await valueIn('production', 'shop/limit')).not.toBe(9)
})

test.skipIf(!chromium)('the Environments page creates and removes one; a user may be given one environment only', async () => {
  const p = await suite.open()
  await clickLink(p, 'Environments')
  await fillByLabel(p, 'Name', 'qa')
  await fillByLabel(p, 'Description', 'for the testers')
  await clickButton(p, 'Create environment')
  await waitForText(p, 'created qa')
  // the switcher reads the environments again after the page says so: wait for its new option
  await p.waitForSelector('#environment option[value="qa"]')
  expect(await p.$$eval('#environment option', (o) => o.map((x) => (x as unknown as { value: string }).value))).toContain('qa')
  expect(await allViolations(p)).toEqual([])
  await fillByLabel(p, 'Name', 'scratch')
  await clickButton(p, 'Create environment')
  await waitForText(p, 'created scratch')
  await clickButton(p, 'Remove scratch')
  await clickButton(p, 'Remove scratch and its states')
  await waitForText(p, 'removed scratch')
  const left = (await (await api('GET', '/api/environments')).json()) as { name: string }[]
  expect(left.map((e) => e.name)).toEqual(['development', 'staging', 'production', 'qa'])
  // a tester who may change qa only
  await clickLink(p, 'Users')
  await fillByLabel(p, 'Username', 'tess')
  await fillByLabel(p, 'Password (8 characters or more)', 'tess-password-1')
  await checkByLabel(p, 'flag:read', true)
  await checkByLabel(p, 'flag:write@qa', true)
  await clickButton(p, 'Add user')
  await waitForText(p, 'tess')
  const users = (await (await api('GET', '/api/users')).json()) as { username: string; permissions: string[] }[]
  expect(users.find((u) => u.username === 'tess')?.permissions).toEqual(['flag:read', 'flag:write@qa'])
})

test.skipIf(!chromium)('at 1400×900 with three environments the list uses the width: names and short values whole', async () => {
  // as a team has them: a description, variants with a rule and a split (a chip in words), a value per environment
  const targeting = {
    if: [
      { in: [{ var: 'country' }, ['DE', 'FR']] },
      'formal',
      {
        fractional: [
          ['formal', 20],
          ['casual', 80],
        ],
      },
    ],
  }
  for (const name of ['layout/express_payment_button', 'layout/greeting_text']) {
    const variants = { formal: 'good day', casual: 'hello world' }
    const body = {
      name,
      type: 'STRING',
      value: 'hello world',
      description: 'What the first screen of the checkout says',
      variants,
      targeting,
    }
    expect((await api('POST', '/api/flags', body)).status).toBe(201)
  }
  const p = await suite.open('admin', 'admin-password', { width: 1400, height: 900 })
  await p.waitForSelector('[data-flag="layout/greeting_text"] .env-cell[data-environment="production"] .value')
  const rows = await p.$$eval('[data-flag^="layout/"]', (items) =>
    items.map((li) => {
      const el = li as unknown as { querySelector(s: string): { getBoundingClientRect(): { width: number; height: number } } }
      const name = el.querySelector('.what').getBoundingClientRect()
      const values = [
        ...(li as unknown as { querySelectorAll(s: string): Iterable<{ scrollWidth: number; clientWidth: number }> }).querySelectorAll(
          '.env-cell .value',
        ),
      ]
      return {
        name: name.width,
        nameHeight: name.height,
        cut: values.filter((v) => v.scrollWidth > v.clientWidth).length,
        values: values.length,
      }
    }),
  )
  expect(rows).toHaveLength(2)
  for (const row of rows) {
    // a name at least 160 px wide (never a letter a line), on one or two lines; every environment's value whole
    expect(row.name).toBeGreaterThanOrEqual(160)
    expect(row.nameHeight).toBeLessThan(60)
    // (three environments, or four once the Environments page's test has made qa)
    expect(row.values).toBeGreaterThanOrEqual(3)
    expect(row.cut).toBe(0)
  }
  // the list is not held to a narrow column while the window has room
  const listWidth = await p.$eval(
    '.flags',
    (el) => (el as unknown as { getBoundingClientRect(): { width: number } }).getBoundingClientRect().width,
  )
  expect(listWidth).toBeGreaterThan(1400 * 0.8)
})
