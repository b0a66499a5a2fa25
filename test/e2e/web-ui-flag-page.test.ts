/**
 * docs/ui.md#a-flags-page in Chromium: one tab per environment (its on/off state and pending
 * requests) that chooses the environment the whole page shows; the sentence of what it serves with a
 * running rollout; targeting in words with the builder only after Edit (Cancel keeps the rule);
 * history entries naming their environment; two columns at 1440 px and one at 390 px with no
 * sideways scrolling; axe-core (any impact) at both widths.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { allViolations, bodyText, clickButton, layoutWidth, selectByLabel, waitForText } from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

// the callbacks below run in the page, where these exist
interface Box {
  left: number
  right: number
  top: number
  bottom: number
}
declare const document: {
  querySelector(selector: string): { getAttribute(name: string): string | null; textContent: string | null } | null
  querySelectorAll(selector: string): Iterable<{ textContent: string | null; getAttribute(name: string): string | null }>
  activeElement: { id: string } | null
}

setDefaultTimeout(90_000)
const FLAG = 'shop/checkout'
const suite = browserSuite('ui-flag-page', async (ui) => {
  expect((await ui.api('PUT', '/api/environments/staging', {})).status).toBe(201)
  expect((await ui.api('PUT', '/api/environments/production', { protected: true, requiredApprovals: 1 })).status).toBe(201)
  expect((await ui.api('POST', '/api/flags', { name: FLAG, type: 'BOOLEAN', value: false, description: 'the new checkout' })).status).toBe(
    201,
  )
  const rule = { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'true'] }
  expect((await ui.api('PUT', `/api/flags/${FLAG}?environment=development`, { targeting: rule })).status).toBe(200)
  expect((await ui.api('PUT', `/api/flags/${FLAG}?environment=staging`, { enabled: false })).status).toBe(200)
  // production: a rollout running whenever the test runs (a window around any moment of the daemon's real clock)
  const rollout = {
    variant: 'true',
    start: '2020-01-01T00:00:00.000Z',
    end: '2099-01-01T00:00:00.000Z',
    fromPercent: 10,
    toPercent: 100,
  }
  expect((await ui.api('PUT', `/api/flags/${FLAG}?environment=production`, { rollout })).status).toBe(200)
  const request = { environment: 'production', title: 'Switch it off', changes: [{ flag: FLAG, set: { enabled: false } }] }
  expect((await ui.api('POST', '/api/change-requests', request)).status).toBe(201)
  const dev = { username: 'dev', password: 'dev-password-1', permissions: ['flag:read', 'flag:write'] }
  expect((await ui.api('POST', '/api/users', dev)).status).toBe(201)
  const reader = { username: 'reader', password: 'reader-password-1', permissions: ['flag:read'] }
  expect((await ui.api('POST', '/api/users', reader)).status).toBe(201)
})
const chromium = suite.chromium
const json = async (path: string) => (await (await suite.ui.api('GET', path)).json()) as Record<string, unknown>

/** Opens the flag's page as `username` (in `environment`, chosen in the switcher first) at `viewport`. */
async function openFlag(environment: string, viewport = { width: 1440, height: 900 }, who = ['admin', 'admin-password']): Promise<Page> {
  // opened at the flag's page, then the environment chosen there, which redraws the page in it
  const p = await suite.open(who[0], who[1], viewport, `flags/${FLAG}`)
  await selectByLabel(p, 'Environment', environment)
  await p.waitForSelector('[role="tablist"] [role="tab"]')
  return p
}

/** The tabs' names and which one is selected. */
const tabs = (p: Page) =>
  p.$$eval('[role="tablist"] [role="tab"]', (all) =>
    all.map((t) => ({ name: t.textContent ?? '', selected: t.getAttribute('aria-selected') === 'true' })),
  )

/** Where the element `selector` is laid out. */
const box = (p: Page, selector: string) =>
  p.$eval(selector, (el) => {
    const r = (el as unknown as { getBoundingClientRect(): Box }).getBoundingClientRect()
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom }
  })

test.skipIf(!chromium)('one tab per environment, naming its on/off state and pending requests, chooses what the page shows', async () => {
  const p = await openFlag('development')
  await p.waitForFunction(() => document.querySelector('[role="tab"][aria-selected="true"]')?.textContent?.includes('pending') ?? false)
  await waitForText(p, 'production · on · 1 pending')
  expect(await tabs(p)).toEqual([
    { name: 'development · on · 0 pending', selected: true },
    { name: 'staging · off · 0 pending', selected: false },
    { name: 'production · on · 1 pending', selected: false },
  ])
  // the panel the tabs control is labelled by the chosen tab
  const panel = await p.$eval('[role="tabpanel"]', (el) => el.getAttribute('aria-labelledby'))
  expect(await p.$eval(`#${panel}`, (el) => el.textContent)).toStartWith('development')

  // choosing production: the switcher follows, and so does every card (the sentence counts the rollout)
  await clickButton(p, 'production · on · 1 pending')
  await p.waitForFunction(
    () => document.querySelector('[role="tab"][aria-selected="true"]')?.textContent?.startsWith('production') ?? false,
  )
  expect(await p.$eval('#environment', (s) => (s as unknown as { value: string }).value)).toBe('production')
  await p.waitForFunction(() => document.querySelector('.serves')?.textContent?.includes('of contexts now, rising to 100 %') ?? false)
  const sentence = await p.$eval('.serves', (e) => e.textContent ?? '')
  expect(sentence).toMatch(/^Serves "true" to \d+(\.\d)? % of contexts now, rising to 100 % on .+; the others: false\./)
  expect(sentence).not.toContain('everyone')
  await waitForText(p, 'Switch it off') // production's pending request, in the rollout card
  // the keyboard: the chosen tab keeps the focus, arrows move to the next environment
  expect(await p.evaluate(() => document.activeElement?.id)).toBe('environment-tab-production')
  await p.keyboard.press('ArrowLeft')
  await p.waitForFunction(() => document.querySelector('[role="tab"][aria-selected="true"]')?.textContent?.startsWith('staging') ?? false)
  await p.waitForFunction(() => document.querySelector('.serves')?.textContent?.startsWith('Serves nothing') ?? false)
})

test.skipIf(!chromium)('in the protected environment, someone without flag:bypass still requests changes from the page', async () => {
  const p = await openFlag('development', undefined, ['dev', 'dev-password-1'])
  await clickButton(p, 'production · on · 1 pending')
  await waitForText(p, 'Request change')
  expect(await bodyText(p)).toContain('Request rollout')
})

test.skipIf(!chromium)('targeting shows in words; the builder appears only after Edit, and Cancel keeps the rule', async () => {
  const p = await openFlag('development')
  await p.waitForSelector('[aria-label="Targeting in words"]')
  expect(await p.$eval('[aria-label="Targeting in words"]', (u) => u.textContent)).toContain('if plan is "pro" → true')
  const builderShown = () => p.evaluate(() => document.querySelector('section[aria-label="Targeting"] fieldset') !== null)
  expect(await builderShown()).toBe(false)
  expect(await bodyText(p)).not.toContain('Add rule')
  await clickButton(p, 'Edit')
  await clickButton(p, 'Add rule')
  await waitForText(p, 'Rule 2')
  expect(await builderShown()).toBe(true)
  await clickButton(p, 'Cancel')
  await p.waitForFunction(() => document.querySelector('section[aria-label="Targeting"] fieldset') === null)
  expect(await bodyText(p)).not.toContain('Save targeting')
  const flag = await json(`/api/flags/${FLAG}?environment=development`)
  expect(flag.targeting).toEqual({ if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'true'] })
  expect(await p.$eval('[aria-label="Targeting in words"]', (u) => u.textContent)).toContain('if plan is "pro" → true')
})

test.skipIf(!chromium)('someone who may only read sees the targeting in words, with no Edit', async () => {
  const p = await openFlag('development', undefined, ['reader', 'reader-password-1'])
  await p.waitForSelector('[aria-label="Targeting in words"]')
  expect(await p.$eval('[aria-label="Targeting in words"]', (u) => u.textContent)).toContain('if plan is "pro" → true')
  const buttons = await p.$$eval('section[aria-label="Targeting"] button', (all) => all.map((b) => b.textContent ?? ''))
  expect(buttons).toEqual([])
  // nor the builder, not even greyed out
  expect(await p.$$('section[aria-label="Targeting"] :is(fieldset, select, textarea)')).toHaveLength(0)
})

test.skipIf(!chromium)('history entries name their environment', async () => {
  const p = await openFlag('development')
  await p.waitForSelector('ol.history li')
  const where = await p.$$eval('ol.history .chip', (chips) => chips.map((c) => c.textContent ?? ''))
  expect(where).toContain('in production')
  expect(where).toContain('in staging')
  expect(where).toContain('in development')
  expect(where).toContain('every environment') // the flag's creation
})

test.skipIf(!chromium)('two columns at 1440 px, one at 390 px without sideways scrolling; no accessibility problem at either', async () => {
  const p = await openFlag('production')
  await p.waitForSelector('ol.history li')
  const targeting = 'section[aria-label="Targeting"]'
  const history = 'section[aria-labelledby="history-title"]'
  const [left, right] = [await box(p, targeting), await box(p, history)]
  expect(right.left).toBeGreaterThanOrEqual(left.right) // side by side
  // the right column starts beside the left one: its first card (the rollout) level with the targeting
  const rollout = await box(p, 'section[aria-labelledby="rollout-title"]')
  expect(rollout.left).toBe(right.left)
  expect(Math.abs(rollout.top - left.top)).toBeLessThan(2)
  expect(await layoutWidth(p)).toBeLessThanOrEqual(1440)
  expect({ width: 1440, violations: await allViolations(p) }).toEqual({ width: 1440, violations: [] })

  await p.setViewport({ width: 390, height: 844 })
  await p.waitForFunction(() => {
    const t = document.querySelector('section[aria-label="Targeting"]') as unknown as { getBoundingClientRect(): Box }
    const h = document.querySelector('section[aria-labelledby="history-title"]') as unknown as { getBoundingClientRect(): Box }
    return h.getBoundingClientRect().top >= t.getBoundingClientRect().bottom
  })
  const [top, below] = [await box(p, targeting), await box(p, history)]
  expect(Math.round(below.left)).toBe(Math.round(top.left)) // one column
  expect(await layoutWidth(p)).toBeLessThanOrEqual(390)
  expect({ width: 390, violations: await allViolations(p) }).toEqual({ width: 390, violations: [] })
})
