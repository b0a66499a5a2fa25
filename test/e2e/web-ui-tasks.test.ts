/**
 * docs/ui.md#common-tasks in Chromium: the cockpit's common tasks, done from the Flags page as a
 * person does them (signed in, production protected with 1 approval, staging open), each counted
 * and held to its target. The counting rule: a click is 1, each key press is 1, choosing an option
 * in a select is 1; waiting, reading and scrolling are free. Every action goes through `Tally`,
 * so nothing a task does escapes the count. The targets: flip a flag in staging in 1 with visible
 * feedback; a 20 % rollout in production through a change request in ≤ 4; approve and apply it in
 * ≤ 3; find the stale flags in 1.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ElementHandle, Page } from 'puppeteer-core'
import { createTestApp } from '../helpers/test-app.ts'
import { allViolations, switchOf, waitForSwitch } from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

// the page's globals, for the functions run in Chromium (the DOM library stays out of the project: ui-driver.ts)
declare const document: any
declare const location: { search: string }

setDefaultTimeout(120_000)
const STALE = ['attic/old_banner', 'attic/old_promo']

/**
 * A data directory whose flags were made 60 days ago and never evaluated: stale (docs/api.md#usage)
 * once the daemon opens it, since no clock of the daemon's own can be moved.
 */
async function staleDataDir(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'flagd-tasks-data-'))
  const long = new Date('2020-01-01T00:00:00.000Z') // long before any day the test runs: the flags are stale
  const app = await createTestApp({}, { dataDir: dir, now: () => long })
  for (const name of STALE)
    expect((await app.req('POST', '/api/flags', { token: app.adminToken, body: { name, type: 'BOOLEAN', value: false } })).status).toBe(201)
  await app.close()
  return dir
}
const seeded = await staleDataDir()

const suite = browserSuite(
  'ui-tasks',
  async (ui) => {
    rmSync(seeded, { recursive: true, force: true })
    expect((await ui.api('PUT', '/api/environments/staging', { description: 'open to every author' })).status).toBe(201)
    expect((await ui.api('PUT', '/api/environments/production', { protected: true, requiredApprovals: 1 })).status).toBe(201)
    for (const name of ['checkout/express', 'checkout/new_flow'])
      expect((await ui.api('POST', '/api/flags', { name, type: 'BOOLEAN', value: false })).status).toBe(201)
    const approver = { username: 'approver', password: 'approver-password-1', permissions: ['flag:read', 'flag:approve'] }
    expect((await ui.api('POST', '/api/users', approver)).status).toBe(201)
  },
  (cwd) => {
    cpSync(seeded, join(cwd, 'data'), { recursive: true })
    return {}
  },
)
const chromium = suite.chromium
const api = (method: string, path: string, body?: unknown) => suite.ui.api(method, path, body)
const stateIn = async (env: string, name: string) =>
  (await (await api('GET', `/api/flags/${name}?environment=${env}`)).json()) as { value: unknown; targeting?: unknown }
type Request = { id: string; environment: string; state: string; changes: { flag: string; set: Record<string, unknown> }[] }
const requestsFor = async (flag: string) => (await (await api('GET', `/api/change-requests?flag=${flag}`)).json()) as Request[]

/** Counts what a person does: every click, key press and option chosen goes through here (the rule above). */
class Tally {
  count = 0
  constructor(readonly p: Page) {}
  /** Clicks the element `selector` names, once it is there. */
  async click(selector: string): Promise<void> {
    const el = await this.p.waitForSelector(selector)
    this.count++
    await el!.click()
  }
  /** Clicks the first element `find` answers, once it answers one (found by its name, as a person finds it). */
  async clickFound(find: (arg: string) => unknown, arg: string): Promise<void> {
    const el = (await this.p.waitForFunction(find, { polling: 'mutation' }, arg)) as unknown as ElementHandle
    this.count++
    await el.click()
  }
  /** Clicks the button named `name` (its aria-label, else its text). */
  clickButton(name: string): Promise<void> {
    return this.clickFound(
      (n) =>
        [...document.querySelectorAll('button')].find((b: any) => (b.getAttribute('aria-label') ?? b.textContent?.trim()) === n) ?? false,
      name,
    )
  }
  /** Presses `key` once. */
  async press(key: Parameters<Page['keyboard']['press']>[0]): Promise<void> {
    this.count++
    await this.p.keyboard.press(key)
  }
  /** Chooses `value` in the select `selector`. */
  async choose(selector: string, value: string): Promise<void> {
    await this.p.waitForSelector(selector)
    this.count++
    await this.p.select(selector, value)
  }
}

/** The Flags page, signed in as `username`, before any counted action. */
async function flagsPage(username?: string, password?: string): Promise<Tally> {
  const p = await suite.open(username, password, { width: 1440, height: 900 })
  await p.waitForSelector('table.flag-table tr.flag')
  return new Tally(p)
}

test.skipIf(!chromium)('flipping a flag in staging takes 1 click, and says what it did beside the table', async () => {
  const t = await flagsPage()
  await t.click(switchOf('checkout/express in staging'))
  await waitForSwitch(t.p, 'checkout/express in staging', true)
  const status = await t.p.waitForFunction(
    () => {
      const s = document.querySelector('.flags [role="status"]')
      return s?.textContent === 'checkout/express in staging: on' && s.getAttribute('aria-live') === 'polite' && s.offsetHeight > 0
    },
    { polling: 'raf' },
  )
  expect(await status.jsonValue()).toBe(true)
  expect(t.count).toBeLessThanOrEqual(1)
  expect((await stateIn('staging', 'checkout/express')).value).toBe(true)
  expect((await stateIn('production', 'checkout/express')).value).toBe(false)
})

test.skipIf(!chromium)('a 20 % rollout in production through a change request takes at most 4', async () => {
  const t = await flagsPage()
  await t.click('tr.flag[data-flag="checkout/new_flow"] a.name')
  await t.clickFound(
    (env) => [...document.querySelectorAll('[role="tab"]')].find((b: any) => b.textContent?.trim().startsWith(env)) ?? false,
    'production',
  )
  await t.p.waitForFunction(() => document.querySelector('[role="tab"][aria-selected="true"]')?.textContent?.includes('production'))
  await t.p.waitForSelector('.quick-rollout')
  expect(await allViolations(t.p, '.quick-rollout')).toEqual([])
  await t.clickButton('Roll out to 20 %')
  await t.p.waitForSelector('dialog[open] #review-title')
  await t.clickButton('Request approval')
  await t.p.waitForSelector('dialog[open] .review-made a')
  expect(t.count).toBeLessThanOrEqual(4)
  const made = (await requestsFor('checkout/new_flow')).filter((r) => r.environment === 'production')
  expect(made.map((r) => r.state)).toEqual(['open'])
  expect(made[0]?.changes).toEqual([
    {
      flag: 'checkout/new_flow',
      set: {
        targeting: {
          fractional: [
            ['true', 20],
            ['false', 80],
          ],
        },
      },
    },
  ])
  expect((await stateIn('production', 'checkout/new_flow')).targeting ?? null).toBeNull()
})

test.skipIf(!chromium)('approving and applying that request takes at most 3 from the Flags page', async () => {
  const t = await flagsPage('approver', 'approver-password-1')
  await t.click('tr.flag[data-flag="checkout/new_flow"] td[data-environment="production"] a.pending')
  await t.clickButton('Approve & apply')
  await t.p.waitForFunction(() => document.body.textContent?.includes('approved and applied'), { polling: 'raf' })
  expect(t.count).toBeLessThanOrEqual(3)
  expect((await requestsFor('checkout/new_flow')).map((r) => r.state)).toEqual(['applied'])
  expect((await stateIn('production', 'checkout/new_flow')).targeting).toEqual({
    fractional: [
      ['true', 20],
      ['false', 80],
    ],
  })
})

test.skipIf(!chromium)('finding the stale flags takes 1 click', async () => {
  const t = await flagsPage()
  await t.click('.counters a[data-counter="stale"]')
  await t.p.waitForFunction(() => location.search === '?state=stale')
  const shown = await t.p.waitForFunction(
    (want) => {
      const rows = [...document.querySelectorAll('tr.flag')].filter((r: any) => !r.hidden).map((r: any) => r.dataset.flag)
      return rows.join(',') === want && rows
    },
    { polling: 'mutation' },
    STALE.join(','),
  )
  expect(await shown.jsonValue()).toEqual(STALE)
  expect(t.count).toBe(1)
})
