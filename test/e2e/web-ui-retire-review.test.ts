/**
 * docs/ui.md#review-before-protected-changes in Chromium, for deleting and archiving a flag while an
 * environment is protected: each opens `Review changes` saying it reaches every environment; an
 * author's `Request approval` makes the change request (a deletion, an archive) and changes
 * nothing yet; a `flag:bypass` holder ticking `Apply now without review` deletes or archives at once.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { checkByLabel, clickButton, waitForText } from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

declare const document: any
declare const location: { pathname: string }

setDefaultTimeout(120_000)
const DIALOG = 'dialog[open][aria-modal="true"]'
const FLAGS = ['old/delete-asked', 'old/archive-asked', 'old/delete-now', 'old/archive-now']

const suite = browserSuite('ui-retire-review', async (ui) => {
  for (const env of ['staging', 'production']) expect((await ui.api('PUT', `/api/environments/${env}`, {})).status).toBe(201)
  for (const name of FLAGS) expect((await ui.api('POST', '/api/flags', { name, type: 'BOOLEAN', value: true })).status).toBe(201)
  expect((await ui.api('PUT', '/api/environments/production', { protected: true, requiredApprovals: 1 })).status).toBe(200)
  const author = { username: 'author', password: 'author-password-1', permissions: ['flag:read', 'flag:write'] }
  expect((await ui.api('POST', '/api/users', author)).status).toBe(201)
})
const chromium = suite.chromium
const api = (method: string, path: string) => suite.ui.api(method, path)
const read = async (name: string) => (await (await api('GET', `/api/flags/${name}`)).json()) as { archived?: boolean }
const status = async (name: string) => (await api('GET', `/api/flags/${name}`)).status
type Request = { environment: string; state: string; changes: { flag: string; set: Record<string, unknown> }[] }
const requestsFor = async (flag: string) => (await (await api('GET', `/api/change-requests?flag=${flag}`)).json()) as Request[]

/** Opens `name`'s page and asks to delete or archive it (confirmed): the review opens; its text. */
async function retire(p: Page, name: string, how: 'Delete' | 'Archive'): Promise<string> {
  await p.goto(`${suite.ui.d.url}/ui/flags/${name}`)
  await p.waitForSelector('#f-default')
  await clickButton(p, how)
  await clickButton(p, how === 'Delete' ? `Delete ${name} for good` : `Archive ${name}`)
  await p.waitForSelector(DIALOG)
  return p.$eval(DIALOG, (d) => d.textContent ?? '')
}

test.skipIf(!chromium)("an author's delete while production is protected is reviewed and requested, not done", async () => {
  const p = await suite.open('author', 'author-password-1')
  const text = await retire(p, 'old/delete-asked', 'Delete')
  expect(text).toContain('Review changes')
  expect(text).toContain('delete the flag in every environment')
  expect(text).toContain('production (protected)')
  expect(text).not.toContain('Apply now without review')
  await clickButton(p, 'Request approval')
  await p.waitForSelector(`${DIALOG} .review-made a`)
  const made = await requestsFor('old/delete-asked')
  expect(made.map((r) => [r.environment, r.state])).toEqual([['production', 'open']])
  expect(made[0]?.changes).toMatchObject([{ flag: 'old/delete-asked', delete: true }])
  expect(await status('old/delete-asked')).toBe(200)
  await clickButton(p, 'Close')
  await waitForText(p, 'change request made in production (open)')
})

test.skipIf(!chromium)("an author's archive while production is protected is requested as an archive", async () => {
  const p = await suite.open('author', 'author-password-1')
  const text = await retire(p, 'old/archive-asked', 'Archive')
  expect(text).toContain('archive the flag in every environment')
  await clickButton(p, 'Request approval')
  await p.waitForSelector(`${DIALOG} .review-made a`)
  const made = await requestsFor('old/archive-asked')
  expect(made[0]?.changes).toMatchObject([{ flag: 'old/archive-asked', archive: true }])
  expect((await read('old/archive-asked')).archived).toBe(false)
})

test.skipIf(!chromium)('a bypass holder deletes and archives at once only by ticking Apply now without review', async () => {
  const p = await suite.open()
  await retire(p, 'old/archive-now', 'Archive')
  expect(await p.$eval('#review-apply-now', (b) => (b as { checked: boolean }).checked)).toBe(false)
  await checkByLabel(p, 'Apply now without review', true)
  await clickButton(p, 'Request approval')
  await p.waitForFunction((s) => !document.querySelector(s), {}, DIALOG)
  await waitForText(p, 'old/archive-now archived')
  expect((await read('old/archive-now')).archived).toBe(true)
  await retire(p, 'old/delete-now', 'Delete')
  await checkByLabel(p, 'Apply now without review', true)
  await clickButton(p, 'Request approval')
  await p.waitForFunction(() => location.pathname === '/ui/' || location.pathname === '/ui')
  expect(await status('old/delete-now')).toBe(404)
  for (const name of ['old/archive-now', 'old/delete-now']) expect(await requestsFor(name)).toEqual([])
})
