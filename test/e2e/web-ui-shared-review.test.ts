/**
 * docs/ui.md#shared-fields-reach-every-environment in Chromium: with staging (unprotected) chosen, a
 * save that changes a shared field every environment serves (the default value, an ENUM's values)
 * opens `Review changes`, which says it reaches production and eu (both protected); an author's
 * `Request approval` saves staging's own part directly and requests the shared part in eu (the
 * protected environment needing the most approvals); a `flag:bypass` holder applies it at once only
 * by ticking `Apply now without review`, and the page says it was applied without review.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { allViolations, checkByLabel, clickButton, fillByLabel, selectByLabel, waitForText } from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

declare const document: any

setDefaultTimeout(90_000)
const suite = browserSuite('ui-shared-review', async (ui) => {
  for (const env of ['staging', 'production', 'eu']) expect((await ui.api('PUT', `/api/environments/${env}`, {})).status).toBe(201)
  for (const name of ['shop/limit', 'shop/cap'])
    expect((await ui.api('POST', '/api/flags', { name, type: 'INTEGER', value: 3, defaultValue: 0 })).status).toBe(201)
  const size = { name: 'shop/size', type: 'ENUM', enumValues: ['s', 'm', 'l'], value: 's', defaultValue: 's' }
  expect((await ui.api('POST', '/api/flags', size)).status).toBe(201)
  expect((await ui.api('PUT', '/api/environments/production', { protected: true, requiredApprovals: 1 })).status).toBe(200)
  expect((await ui.api('PUT', '/api/environments/eu', { protected: true, requiredApprovals: 2 })).status).toBe(200)
  const author = { username: 'author', password: 'author-password-1', permissions: ['flag:read', 'flag:write'] }
  expect((await ui.api('POST', '/api/users', author)).status).toBe(201)
})
const chromium = suite.chromium
const api = (method: string, path: string, body?: unknown) => suite.ui.api(method, path, body)
const url = () => suite.ui.d.url
const read = async (env: string, name: string) =>
  (await (await api('GET', `/api/flags/${name}?environment=${env}`)).json()) as Record<string, unknown>
type Request = { id: string; environment: string; state: string; changes: { flag: string; set: Record<string, unknown> }[] }
const requestsFor = async (flag: string) => (await (await api('GET', `/api/change-requests?flag=${flag}`)).json()) as Request[]

const DIALOG = 'dialog[open][aria-modal="true"]'
const dialogText = (p: Page) => p.$eval(DIALOG, (d) => d.textContent ?? '')

/** Opens `flag`'s page with staging chosen. */
async function openInStaging(p: Page, flag: string): Promise<void> {
  await p.goto(`${url()}/ui/flags/${flag}`)
  await p.waitForSelector('#f-default')
  await selectByLabel(p, 'Environment', 'staging')
  await p.waitForFunction(() => document.querySelector('[role="tab"][aria-selected="true"]')?.textContent?.includes('staging'))
}

test.skipIf(!chromium)(
  "an author's shared change in staging is reviewed, saying it reaches production and eu; staging's own part is saved directly",
  async () => {
    const p = await suite.open('author', 'author-password-1', { width: 1440, height: 900 })
    await openInStaging(p, 'shop/limit')
    await fillByLabel(p, 'Default value', '5')
    await fillByLabel(p, 'Value', '7')
    await clickButton(p, 'Save')
    await p.waitForSelector(DIALOG)
    const text = await dialogText(p)
    expect(text).toContain('Review changes')
    expect(text).toContain('default value 0 → 5')
    expect(text).toContain('this change reaches production and eu (protected), so it is requested in eu')
    expect(text).toContain("staging's own changes (value) are saved directly")
    expect(text).not.toContain('Apply now without review')
    expect(await allViolations(p)).toEqual([])
    await clickButton(p, 'Request approval')
    await p.waitForSelector(`${DIALOG} .review-made a`)
    const [made] = await requestsFor('shop/limit')
    expect(made).toMatchObject({ environment: 'eu', state: 'open', changes: [{ flag: 'shop/limit', set: { defaultValue: 5 } }] })
    expect((await read('staging', 'shop/limit')).value).toBe(7)
    for (const env of ['staging', 'production', 'eu']) expect((await read(env, 'shop/limit')).defaultValue).toBe(0)
    await clickButton(p, 'Close')
    await waitForText(p, 'change request made in eu (open)')
    await waitForText(p, "staging's own changes saved as revision")
  },
)

test.skipIf(!chromium)('a bypass holder applies a shared change at once only by ticking the box, and the page says so', async () => {
  const p = await suite.open()
  await openInStaging(p, 'shop/cap')
  await fillByLabel(p, 'Default value', '9')
  await clickButton(p, 'Save')
  await p.waitForSelector(DIALOG)
  expect(await p.$eval('#review-apply-now', (b) => (b as { checked: boolean }).checked)).toBe(false)
  await checkByLabel(p, 'Apply now without review', true)
  await clickButton(p, 'Request approval')
  await p.waitForFunction((s) => !document.querySelector(s), {}, DIALOG)
  await waitForText(p, 'applied without review (recorded as a bypass)')
  const revision = (await read('eu', 'shop/cap')).revision
  await waitForText(p, `saved as revision ${revision}, applied without review`)
  for (const env of ['staging', 'production', 'eu']) expect((await read(env, 'shop/cap')).defaultValue).toBe(9)
  expect(await requestsFor('shop/cap')).toEqual([])
})

test.skipIf(!chromium)("removing an ENUM's value in staging is a change request, as the page says beside the values", async () => {
  const p = await suite.open('author', 'author-password-1')
  await openInStaging(p, 'shop/size')
  await waitForText(p, "They are this flag's variants")
  await clickButton(p, 'Remove allowed value 3')
  await clickButton(p, 'Save')
  await p.waitForSelector(DIALOG)
  expect(await dialogText(p)).toContain('allowed values ["s","m","l"] → ["s","m"]')
  await clickButton(p, 'Request approval')
  await p.waitForSelector(`${DIALOG} .review-made a`)
  const [made] = await requestsFor('shop/size')
  expect(made).toMatchObject({ environment: 'eu', changes: [{ flag: 'shop/size', set: { enumValues: ['s', 'm'] } }] })
  expect((await read('production', 'shop/size')).enumValues).toEqual(['s', 'm', 'l'])
})
