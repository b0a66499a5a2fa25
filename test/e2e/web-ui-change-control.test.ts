/**
 * docs/ui.md#change-control in Chromium: in a protected environment a flag's page requests changes
 * instead of saving them; the Change requests page shows the diff and approves and applies; a
 * rollout is started from a flag's page and shown as a timeline; axe-core on the new screens.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import { allViolations, bodyText, clickButton, clickLink, selectByLabel, waitForText } from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

setDefaultTimeout(60_000)
const suite = browserSuite('ui-change-control', async (ui) => {
  expect((await ui.api('PUT', '/api/environments/production', { protected: true, requiredApprovals: 1 })).status).toBe(201)
  await ui.api('POST', '/api/flags', { name: 'shop/dark_mode', type: 'BOOLEAN', value: false })
  const users = [
    { username: 'dev', password: 'dev-password-1', permissions: ['flag:read', 'flag:write'] },
    { username: 'lead', password: 'lead-password-1', permissions: ['flag:read', 'flag:approve@production'] },
  ]
  for (const u of users) expect((await ui.api('POST', '/api/users', u)).status).toBe(201)
})
const chromium = suite.chromium
const api = (method: string, path: string, body?: unknown) => suite.ui.api(method, path, body)

test.skipIf(!chromium)('a change in a protected environment is requested, then approved and applied by another person', async () => {
  const dev = await suite.open('dev', 'dev-password-1')
  await selectByLabel(dev, 'Environment', 'production')
  await dev.goto(`${suite.ui.d.url}/ui/flags/shop/dark_mode`)
  await waitForText(dev, 'Request change')
  expect(await bodyText(dev)).not.toContain('Save targeting')
  await clickButton(dev, 'Enabled')
  // the switch opens the review first (docs/ui.md#review-before-protected-changes): the change in words, then the request
  await waitForText(dev, 'Review changes')
  await waitForText(dev, 'enabled true → false')
  await clickButton(dev, 'Request approval')
  await waitForText(dev, 'change request made (open)')
  expect(((await (await api('GET', '/api/flags/shop/dark_mode?environment=production')).json()) as { enabled: boolean }).enabled).toBe(true)

  const lead = await suite.open('lead', 'lead-password-1')
  await clickLink(lead, 'Change requests')
  // the request opens at its own page, from the table's row (docs/ui.md#change-requests)
  await clickLink(lead, 'Change shop/dark_mode: enabled')
  await waitForText(lead, 'What it changes in production')
  expect(await bodyText(lead)).toContain('enabled')
  expect(await allViolations(lead)).toEqual([])
  await clickButton(lead, 'Approve')
  await waitForText(lead, 'approved: the request is approved now')
  await clickButton(lead, 'Apply')
  await waitForText(lead, 'applied: the request is applied now')
  expect(((await (await api('GET', '/api/flags/shop/dark_mode?environment=production')).json()) as { enabled: boolean }).enabled).toBe(
    false,
  )
  // the audit log (the admin's) shows the request's life when asked for change requests only
  const admin = await suite.open()
  await clickLink(admin, 'Audit log')
  await selectByLabel(admin, 'Kind', 'change-request.')
  await clickButton(admin, 'Filter')
  // the filtered list: every entry a change request's, the apply among them
  await admin.waitForFunction(
    "(() => { const kinds = [...document.querySelectorAll('[data-entry] strong')].map((e) => e.textContent ?? '');" +
      " return kinds.includes('change-request.applied') && kinds.every((k) => k.startsWith('change-request.')) })()",
  )
})

test.skipIf(!chromium)("a rollout started from a flag's page, shown as a timeline of its percentage", async () => {
  const p = await suite.open()
  // the Environment chosen is remembered by the browser: this one works in development
  await selectByLabel(p, 'Environment', 'development')
  await p.goto(`${suite.ui.d.url}/ui/flags/shop/dark_mode`)
  await waitForText(p, 'No rollout in this environment')
  await clickButton(p, 'Start rollout')
  await waitForText(p, 'rollout saved as revision')
  await waitForText(p, 'Serves "true" to 5 % of contexts now')
  const flag = (await (await api('GET', '/api/flags/shop/dark_mode')).json()) as { rollout: { fromPercent: number; toPercent: number } }
  expect(flag.rollout).toMatchObject({ fromPercent: 5, toPercent: 100 })
  expect(await p.$$eval('ol.timeline li', (l) => l.length)).toBe(5)
  expect(await allViolations(p)).toEqual([])
})

test.skipIf(!chromium)("during a rollout a flag's page says what it serves in words, per environment and in its history", async () => {
  await api('POST', '/api/flags', { name: 'shop/express', type: 'BOOLEAN', value: false })
  // a rollout half-way through its window in production (the admin holds flag:bypass there)
  const day = 86_400_000
  const rollout = {
    variant: 'true',
    start: new Date(Date.now() - 10 * day).toISOString(),
    end: new Date(Date.now() + 10 * day).toISOString(),
    fromPercent: 10,
    toPercent: 100,
  }
  expect((await api('PUT', '/api/flags/shop/express?environment=production', { rollout })).status).toBe(200)
  const p = await suite.open('admin', 'admin-password', { width: 1400, height: 900 })
  await selectByLabel(p, 'Environment', 'production')
  await p.goto(`${suite.ui.d.url}/ui/flags/shop/express`)
  await p.waitForSelector('ol.timeline li')
  // the sentence at the top counts the rollout: never "to everyone" while it decides
  await p.waitForFunction("document.querySelector('.serves')?.textContent?.includes('of contexts now')")
  expect(await p.$eval('.serves', (e) => e.textContent ?? '')).not.toContain('everyone')
  // the environments table: production's rollout in words, its rule row not a bare "no rule" (the
  // table's states are read after the flag, so wait for them)
  await p.waitForFunction("document.querySelector('table.environments')?.textContent?.includes('of contexts now')")
  const table = await p.$$eval('table.environments tr', (rows) =>
    rows.map((r) => [...(r as unknown as { children: Iterable<{ textContent: string | null }> }).children].map((c) => c.textContent ?? '')),
  )
  const column = (env: string) => table[0]?.findIndex((h) => h.startsWith(env)) ?? -1
  const cell = (label: string, env: string) => table.find((r) => r[0] === label)?.[column(env)] ?? ''
  expect(cell('Rollout', 'production')).toContain('% of contexts now')
  expect(cell('Rule', 'production')).not.toBe('no rule')
  expect(cell('Rollout', 'development')).toBe('none')
  // the timeline's milestones stand apart: no list marker, no item running into the next
  const boxes = await p.$$eval('ol.timeline li', (items) =>
    items.map((li) => {
      const el = li as unknown as { getBoundingClientRect(): { left: number; right: number; top: number; bottom: number } }
      const r = el.getBoundingClientRect()
      const style = (globalThis as unknown as { getComputedStyle(e: unknown): { listStyleType: string } }).getComputedStyle(li)
      return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, marker: style.listStyleType }
    }),
  )
  expect(boxes).toHaveLength(5)
  for (const [i, b] of boxes.entries()) {
    expect(b.marker).toBe('none')
    const next = boxes[i + 1]
    if (next && next.top < b.bottom) expect(next.left).toBeGreaterThanOrEqual(b.right + 4)
  }
  // the history says the rollout in words and names the environment it was in
  await waitForText(p, 'rollout none → rollout of "true" from 10 %')
  const history = await p.$$eval('ol.history li', (items) => items.map((li) => li.textContent ?? ''))
  expect(history.join('\n')).not.toContain('{"variant"')
  expect(history.find((h) => h.includes('rollout of'))).toContain('in production')
})

test.skipIf(!chromium)("a flag's history names the environment of each change", async () => {
  await api('POST', '/api/flags', { name: 'shop/banner', type: 'BOOLEAN', value: false })
  expect((await api('PUT', '/api/flags/shop/banner?environment=production', { enabled: false })).status).toBe(200)
  const p = await suite.open()
  await selectByLabel(p, 'Environment', 'development')
  await p.goto(`${suite.ui.d.url}/ui/flags/shop/banner`)
  await waitForText(p, 'enabled true → false')
  const history = await p.$$eval('ol.history li', (items) => items.map((li) => li.textContent ?? ''))
  expect(history.find((h) => h.includes('enabled true → false'))).toContain('in production')
  expect(history.find((h) => h.includes('created'))).toContain('every environment')
  expect(await allViolations(p)).toEqual([])
})

test.skipIf(!chromium)('Compare opens toward the protected environment', async () => {
  const p = await suite.open()
  await selectByLabel(p, 'Environment', 'development')
  await clickLink(p, 'Compare')
  await p.waitForSelector('#compare-to')
  const chosen = await p.evaluate("[document.querySelector('#compare-from').value, document.querySelector('#compare-to').value]")
  expect(chosen).toEqual(['development', 'production'])
})

test.skipIf(!chromium)("a requested rollout reads in words on the request's page, not as JSON", async () => {
  await api('POST', '/api/flags', { name: 'shop/slow_roll', type: 'BOOLEAN', value: false })
  const set = { rollout: { variant: 'true', start: '2030-01-01T09:00:00Z', end: '2030-01-08T09:00:00Z', fromPercent: 5, toPercent: 100 } }
  const made = await api('POST', '/api/change-requests', {
    environment: 'production',
    title: 'Slow roll',
    changes: [{ flag: 'shop/slow_roll', set }],
  })
  expect(made.status).toBe(201)
  const p = await suite.open()
  await clickLink(p, 'Change requests')
  // the admin's own request is in the Open tab, not in what waits for their review
  await (await p.waitForSelector('#tab-open'))?.click()
  await clickLink(p, 'Slow roll')
  await waitForText(p, 'rollout of "true" from 5 % on')
  expect(await bodyText(p)).not.toContain('"fromPercent"')
})
