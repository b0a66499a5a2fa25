/**
 * docs/ui.md#shared-fields-reach-every-environment in Chromium, for a rollback from a flag's history
 * with an unprotected environment (staging) chosen that restores a shared field: it opens `Review
 * changes` saying it reaches production; an author's `Request approval` rolls staging's own part
 * back directly and requests the shared part in production; a `flag:bypass` holder rolls it all back
 * at once only by ticking `Apply now without review`.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { checkByLabel, clickButton, selectByLabel, waitForText } from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

declare const document: any

setDefaultTimeout(120_000)
const DIALOG = 'dialog[open][aria-modal="true"]'
/** Per flag, the revision at which staging served 4 with the default value 0. */
const was = new Map<string, number>()

const suite = browserSuite('ui-rollback-shared-review', async (ui) => {
  for (const env of ['staging', 'production']) expect((await ui.api('PUT', `/api/environments/${env}`, {})).status).toBe(201)
  for (const name of ['back/requested', 'back/bypassed']) {
    expect((await ui.api('POST', '/api/flags', { name, type: 'INTEGER', value: 3, defaultValue: 0 })).status).toBe(201)
    const four = await ui.api('PUT', `/api/flags/${name}?environment=staging`, { value: 4 })
    expect(four.status).toBe(200)
    was.set(name, ((await four.json()) as { revision: number }).revision)
  }
  expect((await ui.api('PUT', '/api/environments/production', { protected: true, requiredApprovals: 1 })).status).toBe(200)
  // the admin holds flag:bypass: the shared change applies at once
  for (const name of ['back/requested', 'back/bypassed'])
    expect((await ui.api('PUT', `/api/flags/${name}?environment=staging`, { defaultValue: 5, value: 7 })).status).toBe(200)
  const author = { username: 'author', password: 'author-password-1', permissions: ['flag:read', 'flag:write'] }
  expect((await ui.api('POST', '/api/users', author)).status).toBe(201)
})
const chromium = suite.chromium
const api = (method: string, path: string) => suite.ui.api(method, path)
const read = async (env: string, name: string) =>
  (await (await api('GET', `/api/flags/${name}?environment=${env}`)).json()) as Record<string, unknown>
type Request = { environment: string; state: string; changes: { flag: string; set: Record<string, unknown> }[] }
const requestsFor = async (flag: string) => (await (await api('GET', `/api/change-requests?flag=${flag}`)).json()) as Request[]

/** Opens `name`'s page in staging and asks to roll it back to the revision staging served 4 at: the review opens. */
async function rollBackInStaging(p: Page, name: string): Promise<string> {
  const revision = was.get(name)
  await p.goto(`${suite.ui.d.url}/ui/flags/${name}`)
  await p.waitForSelector('#f-default')
  await selectByLabel(p, 'Environment', 'staging')
  await p.waitForFunction(() => document.querySelector('[role="tab"][aria-selected="true"]')?.textContent?.includes('staging'))
  await clickButton(p, `Roll back to revision ${revision}`)
  await clickButton(p, `Restore revision ${revision} now`)
  await p.waitForSelector(DIALOG)
  return p.$eval(DIALOG, (d) => d.textContent ?? '')
}

test.skipIf(!chromium)(
  "an author's rollback in staging restoring the default value is reviewed; staging's part rolls back directly",
  async () => {
    const p = await suite.open('author', 'author-password-1')
    const text = await rollBackInStaging(p, 'back/requested')
    expect(text).toContain('Review changes')
    expect(text).toContain('default value 5 → 0')
    expect(text).toContain('this change reaches production (protected), so it is requested in production')
    expect(text).toContain("staging's own changes (value) are saved directly")
    expect(text).not.toContain('Apply now without review')
    await clickButton(p, 'Request approval')
    await p.waitForSelector(`${DIALOG} .review-made a`)
    const made = await requestsFor('back/requested')
    expect(made.map((r) => [r.environment, r.state])).toEqual([['production', 'open']])
    expect(made[0]?.changes).toEqual([{ flag: 'back/requested', set: { defaultValue: 0 } }])
    expect(await read('staging', 'back/requested')).toMatchObject({ value: 4, defaultValue: 5 })
    expect((await read('production', 'back/requested')).defaultValue).toBe(5)
  },
)

test.skipIf(!chromium)('a bypass holder rolls a shared field back at once only by ticking Apply now without review', async () => {
  const p = await suite.open()
  await rollBackInStaging(p, 'back/bypassed')
  expect(await p.$eval('#review-apply-now', (b) => (b as { checked: boolean }).checked)).toBe(false)
  await checkByLabel(p, 'Apply now without review', true)
  await clickButton(p, 'Request approval')
  await p.waitForFunction((s) => !document.querySelector(s), {}, DIALOG)
  await waitForText(p, `rolled back to revision ${was.get('back/bypassed')}`)
  expect(await read('staging', 'back/bypassed')).toMatchObject({ value: 4, defaultValue: 0 })
  expect((await read('production', 'back/bypassed')).defaultValue).toBe(0)
  expect(await requestsFor('back/bypassed')).toEqual([])
})
