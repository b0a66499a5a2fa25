/**
 * docs/ui.md#change-requests in Chromium: the Change requests table in its tabs (`Needs my review`,
 * `Open`, `Scheduled`, `Closed`) over requests in every state by two authors; a request's own page
 * in words with its JSON behind `Show JSON`; `Approve & apply` offered only when one's approval
 * completes a request, reached from the Flags page's `pending` mark; axe-core on the Closed tab and on
 * a request's page as its reviewer sees it. Pages after a tab's first are reached in-app.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import {
  allViolations,
  bodyText,
  clickButton,
  clickEnabledButton,
  clickLink,
  layoutWidth,
  selectByLabel,
  sessionOf,
  waitForPath,
  waitForText,
} from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

setDefaultTimeout(120_000)
const ROLLOUT = {
  variant: 'true',
  start: '2030-01-01T09:00:00Z',
  end: '2030-01-08T09:00:00Z',
  fromPercent: 5,
  toPercent: 100,
  // a long attribute: its JSON line is wider than a phone
  by: 'organisationIdentifierThatEveryServiceSendsAlongWithEachEvaluation',
}
const ids = new Map<string, string>()
const suite = browserSuite('ui-change-requests', async (ui) => {
  expect((await ui.api('PUT', '/api/environments/production', { protected: true, requiredApprovals: 1 })).status).toBe(201)
  expect((await ui.api('PUT', '/api/environments/staging', { requiredApprovals: 2 })).status).toBe(201)
  const users = [
    { username: 'dev', password: 'dev-password-1', permissions: ['flag:read', 'flag:write'] },
    { username: 'lead', password: 'lead-password-1', permissions: ['flag:read', 'flag:write', 'flag:approve'] },
    { username: 'ops', password: 'ops-password-1', permissions: ['flag:read', 'flag:approve'] },
  ]
  for (const u of users) expect((await ui.api('POST', '/api/users', u)).status).toBe(201)
  for (let i = 1; i <= 10; i++)
    expect((await ui.api('POST', '/api/flags', { name: `shop/f${i}`, type: 'BOOLEAN', value: false })).status).toBe(201)
  const [dev, lead, ops] = await Promise.all(users.map((u) => sessionOf(ui.d.url, u.username, u.password)))
  const as = async (token: string, method: string, path: string, body?: unknown) => {
    const res = await ui.api(method, path, body ?? {}, token)
    expect(res.status).toBeLessThan(300)
    return (await res.json()) as { id: string; state: string }
  }
  const make = async (token: string, title: string, flag: string, set: Record<string, unknown>, more: Record<string, unknown> = {}) => {
    const made = await as(token, 'POST', '/api/change-requests', { environment: 'production', title, changes: [{ flag, set }], ...more })
    ids.set(title, made.id)
    return made.id
  }
  const approve = (id: string) => as(ops as string, 'POST', `/api/change-requests/${id}/approve`, { comment: 'looks right' })
  await make(dev as string, 'Open by dev', 'shop/f1', { value: true })
  await make(lead as string, 'Open by lead', 'shop/f2', { value: true })
  await approve(await make(dev as string, 'Approved by dev', 'shop/f3', { value: true }))
  await approve(await make(lead as string, 'Scheduled by lead', 'shop/f4', { value: true }, { scheduledAt: '2030-01-01T09:00:00Z' }))
  const applied = await make(dev as string, 'Applied by dev', 'shop/f5', { value: true })
  await approve(applied)
  await as(dev as string, 'POST', `/api/change-requests/${applied}/apply`)
  await as(
    ops as string,
    'POST',
    `/api/change-requests/${await make(lead as string, 'Rejected by lead', 'shop/f6', { value: true })}/reject`,
    {
      comment: 'not before the freeze',
    },
  )
  await as(
    dev as string,
    'POST',
    `/api/change-requests/${await make(dev as string, 'Cancelled by dev', 'shop/f7', { value: true })}/cancel`,
  )
  await make(dev as string, 'Staging roll by dev', 'shop/f8', { rollout: ROLLOUT }, { environment: 'staging' })
})
const chromium = suite.chromium
const api = (method: string, path: string, body?: unknown) => suite.ui.api(method, path, body)

/** The titles of the table's rows. */
const rowTitles = (p: Page) => p.$$eval('table.request-table tbody th a', (as) => as.map((a) => a.textContent ?? ''))
/** The tabs' text, as shown: name and count. */
const tabTexts = (p: Page) => p.$$eval('[role="tab"]', (tabs) => tabs.map((t) => (t.textContent ?? '').trim()))
/** Clicks the tab whose name starts with `name` and waits for its panel. */
async function openTab(p: Page, name: string) {
  await p.waitForSelector('[role="tab"]')
  await p.$$eval(
    '[role="tab"]',
    (tabs, n) => (tabs.find((t) => t.textContent?.startsWith(n)) as unknown as { click(): void }).click(),
    name,
  )
  await p.waitForSelector(`[role="tab"][aria-selected="true"][id="tab-${TAB_KEYS[name]}"]`)
}
const TAB_KEYS: Record<string, string> = { 'Needs my review': 'review', Open: 'open', Scheduled: 'scheduled', Closed: 'closed' }

/** Goes to `path` below /ui/ inside the app, as its links do: no page load. */
async function visit(p: Page, path: string): Promise<void> {
  await p.evaluate(`history.pushState(null, '', ${JSON.stringify(`/ui/${path}`)}); dispatchEvent(new PopStateEvent('popstate'))`)
}
/** Goes to request `id`'s own page in-app and waits for it. */
async function requestPage(p: Page, id: string | undefined): Promise<void> {
  await visit(p, `change-requests/${id}`)
  await waitForPath(p, `/ui/change-requests/${id}`)
  await waitForText(p, 'What it changes in')
}

test.skipIf(!chromium)('the tabs hold the requests of their states, each with its count; Needs my review leaves out my own', async () => {
  const p = await suite.open('lead', 'lead-password-1', { width: 1440, height: 900 })
  await clickLink(p, 'Change requests')
  // what needs the lead first, and the address says so
  await p.waitForSelector('table.request-table')
  expect(new URL(p.url()).searchParams.get('tab')).toBe('review')
  expect(await tabTexts(p)).toEqual(['Needs my review (2)', 'Open (4)', 'Scheduled (1)', 'Closed (3)'])
  // each tab's accessible name is its stable name; its count is its description
  expect(await p.$$eval('[role="tab"]', (tabs) => tabs.map((t) => t.getAttribute('aria-label')))).toEqual([
    'Needs my review',
    'Open',
    'Scheduled',
    'Closed',
  ])
  expect((await rowTitles(p)).sort()).toEqual(['Open by dev', 'Staging roll by dev'])
  await openTab(p, 'Open')
  expect((await rowTitles(p)).sort()).toEqual(['Approved by dev', 'Open by dev', 'Open by lead', 'Staging roll by dev'])
  await openTab(p, 'Scheduled')
  expect(await rowTitles(p)).toEqual(['Scheduled by lead'])
  await openTab(p, 'Closed')
  expect((await rowTitles(p)).sort()).toEqual(['Applied by dev', 'Cancelled by dev', 'Rejected by lead'])
  expect(new URL(p.url()).searchParams.get('tab')).toBe('closed')
  // a row: its flags, environment, author, state and approvals n/m
  const row = await p.$eval(`tr[data-request="${ids.get('Applied by dev')}"]`, (tr) => tr.textContent ?? '')
  for (const part of ['shop/f5', 'production', 'dev', 'applied', '1/1']) expect(row).toContain(part)
  expect(await allViolations(p)).toEqual([])
  // the tab survives a reload; ops, who wrote nothing, has only the others' requests to review
  await p.reload()
  await p.waitForSelector('table.request-table')
  expect(await p.$eval('[role="tab"][aria-selected="true"]', (t) => t.textContent ?? '')).toStartWith('Closed')
  const ops = await suite.open('ops', 'ops-password-1', { width: 390, height: 844 })
  await visit(ops, 'change-requests?tab=review')
  await ops.waitForSelector('table.request-table')
  expect((await rowTitles(ops)).sort()).toEqual(['Open by dev', 'Open by lead', 'Staging roll by dev'])
  expect(await layoutWidth(ops)).toBeLessThanOrEqual(390)
  // on a phone too, each row says its state (axe-core on the table at 390 px: web-ui-everywhere.test.ts)
  expect(await ops.evaluate(`document.querySelector('table.request-table tbody .chip')?.checkVisibility()`)).toBe(true)
})

test.skipIf(!chromium)("a request's own page says its changes in words, its JSON behind Show JSON; a reload there works", async () => {
  const p = await suite.open('lead', 'lead-password-1', { width: 1440, height: 900 })
  await clickLink(p, 'Change requests')
  await clickLink(p, 'Staging roll by dev')
  await waitForPath(p, `/ui/change-requests/${ids.get('Staging roll by dev')}`)
  await waitForText(p, 'shop/f8: rollout none → rollout of "true" from 5 % on')
  expect(await p.$eval('h1', (h) => h.textContent)).toBe('Staging roll by dev')
  expect(await bodyText(p)).toContain('What it changes in staging')
  expect(await bodyText(p)).not.toContain('"fromPercent"')
  await clickButton(p, 'Show JSON')
  await waitForText(p, '"fromPercent": 5')
  // staging needs two approvals: the lead's alone does not complete it
  await p.waitForFunction("[...document.querySelectorAll('button')].some((b) => b.textContent === 'Approve')")
  expect(await bodyText(p)).not.toContain('Approve & apply')
  // axe-core on this page once, at the phone's width below (the layout is CSS alone)
  await p.reload()
  await waitForText(p, 'shop/f8: rollout none → rollout of "true" from 5 % on')
  await p.setViewport({ width: 390, height: 844 })
  await clickButton(p, 'Show JSON')
  await waitForText(p, '"fromPercent": 5')
  expect(await layoutWidth(p)).toBeLessThanOrEqual(390)
  expect(await allViolations(p)).toEqual([])
})

test.skipIf(!chromium)('Approve & apply is offered where the approval completes a request, and applies it', async () => {
  const p = await suite.open('lead', 'lead-password-1')
  await requestPage(p, ids.get('Open by dev'))
  await clickEnabledButton(p, 'Approve & apply')
  await waitForText(p, 'approved and applied: the request is applied now')
  const read = (await (await api('GET', `/api/change-requests/${ids.get('Open by dev')}`)).json()) as {
    state: string
    approvals: unknown[]
  }
  expect(read.state).toBe('applied')
  expect(read.approvals).toHaveLength(1)
  expect(((await (await api('GET', '/api/flags/shop/f1?environment=production')).json()) as { value: boolean }).value).toBe(true)
  // applied: no button left to press
  expect(await bodyText(p)).not.toContain('Approve & apply')
  // its own request: the author is never offered an approval
  await visit(p, `change-requests/${ids.get('Open by lead')}`)
  await waitForPath(p, `/ui/change-requests/${ids.get('Open by lead')}`)
  await waitForText(p, 'Open by lead')
  await waitForText(p, 'What it changes in production')
  expect(await p.$$eval('button', (bs) => bs.map((b) => b.textContent))).not.toContain('Approve')
})

test.skipIf(!chromium)('from the Flags page: the pending mark opens the request, approved and applied in one more click', async () => {
  const dev = await sessionOf(suite.ui.d.url, 'dev', 'dev-password-1')
  const made = await suite.ui.api(
    'POST',
    '/api/change-requests',
    { environment: 'production', title: 'Ship f9', changes: [{ flag: 'shop/f9', set: { value: true } }] },
    dev,
  )
  const { id } = (await made.json()) as { id: string }
  const p = await suite.open('lead', 'lead-password-1', { width: 1440, height: 900 })
  await selectByLabel(p, 'Environment', 'production')
  const mark = 'tr[data-flag="shop/f9"] td[data-environment="production"] a.pending'
  await p.waitForSelector(mark)
  await p.click(mark) // 1
  await waitForPath(p, `/ui/change-requests/${id}`)
  await clickEnabledButton(p, 'Approve & apply') // 2
  await waitForText(p, 'approved and applied: the request is applied now')
  expect(((await (await api('GET', '/api/flags/shop/f9?environment=production')).json()) as { value: boolean }).value).toBe(true)
})

test.skipIf(!chromium)('an apply that fails after the approval says why and keeps the approval', async () => {
  const dev = await sessionOf(suite.ui.d.url, 'dev', 'dev-password-1')
  const made = await suite.ui.api(
    'POST',
    '/api/change-requests',
    { environment: 'production', title: 'Ship f10', changes: [{ flag: 'shop/f10', set: { value: true } }] },
    dev,
  )
  const { id } = (await made.json()) as { id: string }
  // the admin (flag:bypass) changes the flag in production since: applying the request must fail
  expect((await api('PUT', '/api/flags/shop/f10?environment=production', { enabled: false })).status).toBe(200)
  const p = await suite.open('lead', 'lead-password-1')
  await requestPage(p, id)
  await clickEnabledButton(p, 'Approve & apply')
  await waitForText(p, 'approved, but not applied:')
  const read = (await (await api('GET', `/api/change-requests/${id}`)).json()) as { approvals: { by: { name: string } }[] }
  expect(read.approvals.map((a) => a.by.name)).toEqual(['lead'])
})

/** The words of the elements matching `selector` that wrap inside themselves ("r ollout"). */
const brokenWords = (p: Page, selector: string) =>
  p.$$eval(selector, (elements) =>
    elements.flatMap((element) => {
      const broken: string[] = []
      const walker = element.ownerDocument.createTreeWalker(element, 4) // NodeFilter.SHOW_TEXT
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const word of (node.textContent ?? '').matchAll(/[A-Za-z]+/g)) {
          const range = element.ownerDocument.createRange()
          range.setStart(node, word.index)
          range.setEnd(node, word.index + word[0].length)
          if (range.getClientRects().length > 1) broken.push(word[0])
        }
      }
      return broken
    }),
  )

test.skipIf(!chromium)("on a phone, a request's title and the table's headers wrap between words, never inside one", async () => {
  const made = await suite.ui.api('POST', '/api/change-requests', {
    environment: 'production',
    title: 'Change shop/f7: value and rollout for everyone',
    changes: [{ flag: 'shop/f7', set: { value: true } }],
  })
  expect(made.status).toBe(201)
  const { id } = (await made.json()) as { id: string }
  const p = await suite.open('lead', 'lead-password-1', { width: 390, height: 844 })
  await visit(p, `change-requests/${id}`)
  await waitForText(p, 'shop/f7: value')
  // docs/ui.md#everywhere: only a name with no space in it breaks where it must
  expect(await brokenWords(p, 'h1')).toEqual([])
  await visit(p, 'change-requests?tab=open')
  await p.waitForSelector('table.request-table')
  expect(await brokenWords(p, 'table.request-table thead th')).toEqual([])
  expect(await layoutWidth(p)).toBeLessThanOrEqual(390)
})
