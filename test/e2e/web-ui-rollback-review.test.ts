/**
 * docs/ui.md#review-before-protected-changes in Chromium, for a rollback from a flag's history: into
 * a protected environment it opens `Review changes` with what it restores there in words;
 * `Request approval` makes a change request setting those fields and changes nothing yet; a
 * `flag:bypass` holder ticking `Apply now without review` rolls back at once.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { checkByLabel, clickButton, waitForText } from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

// the page's globals, for the functions run in Chromium (the DOM library stays out of the project: ui-driver.ts)
declare const document: any

setDefaultTimeout(120_000)
const DIALOG = 'dialog[open][aria-modal="true"]'
/** Per flag, the revision at which production served `true` and was still enabled. */
const wasOn = new Map<string, number>()

const suite = browserSuite('ui-rollback-review', async (ui) => {
  expect((await ui.api('PUT', '/api/environments/production', { protected: true, requiredApprovals: 1 })).status).toBe(201)
  const author = { username: 'author', password: 'author-password-1', permissions: ['flag:read', 'flag:write'] }
  expect((await ui.api('POST', '/api/users', author)).status).toBe(201)
  for (const name of ['hist/requested', 'hist/bypassed']) {
    expect((await ui.api('POST', '/api/flags', { name, type: 'BOOLEAN', value: false })).status).toBe(201)
    // the admin holds flag:bypass: these two production changes apply at once
    const on = await ui.api('PUT', `/api/flags/${name}?environment=production`, { value: true })
    expect(on.status).toBe(200)
    wasOn.set(name, ((await on.json()) as { revision: number }).revision)
    expect((await ui.api('PUT', `/api/flags/${name}?environment=production`, { enabled: false })).status).toBe(200)
  }
})
const chromium = suite.chromium
const api = (method: string, path: string) => suite.ui.api(method, path)
const production = async (name: string) =>
  (await (await api('GET', `/api/flags/${name}?environment=production`)).json()) as { enabled: boolean; value: unknown }
type Request = { environment: string; state: string; changes: { flag: string; set: Record<string, unknown> }[] }
const requestsFor = async (flag: string) => (await (await api('GET', `/api/change-requests?flag=${flag}`)).json()) as Request[]

/** Opens `name`'s page and asks to roll it back to the revision production served `true` at: the review opens. */
async function rollBackInProduction(p: Page, name: string): Promise<string> {
  const revision = wasOn.get(name)
  await p.goto(`${suite.ui.d.url}/ui/flags/${name}`)
  await clickButton(p, `Roll back to revision ${revision}`)
  await clickButton(p, `Restore revision ${revision} now`)
  await p.waitForSelector(DIALOG)
  return p.$eval(DIALOG, (d) => d.textContent ?? '')
}

test.skipIf(!chromium)("an author's rollback into production is reviewed, and requested rather than written", async () => {
  const p = await suite.open('author', 'author-password-1')
  const text = await rollBackInProduction(p, 'hist/requested')
  expect(text).toContain('Review changes')
  expect(text).toContain('enabled false → true')
  expect(text).not.toContain('Apply now without review')
  await clickButton(p, 'Request approval')
  await p.waitForSelector(`${DIALOG} .review-made a`)
  const made = await requestsFor('hist/requested')
  expect(made.map((r) => [r.environment, r.state])).toEqual([['production', 'open']])
  expect(made[0]?.changes).toEqual([{ flag: 'hist/requested', set: { enabled: true } }])
  expect((await production('hist/requested')).enabled).toBe(false)
})

test.skipIf(!chromium)('a bypass holder ticking Apply now without review rolls back at once', async () => {
  const p = await suite.open()
  await rollBackInProduction(p, 'hist/bypassed')
  await checkByLabel(p, 'Apply now without review', true)
  await clickButton(p, 'Request approval')
  await p.waitForFunction((s) => !document.querySelector(s), {}, DIALOG)
  await waitForText(p, `rolled back to revision ${wasOn.get('hist/bypassed')}`)
  expect(await production('hist/bypassed')).toMatchObject({ enabled: true, value: true })
  expect(await requestsFor('hist/bypassed')).toEqual([])
})
