/**
 * docs/ui.md#change-control in Chromium: in a protected environment a flag's page requests changes
 * instead of saving them; the Change requests page shows the diff and approves and applies; a
 * rollout is started from a flag's page and shown as a timeline; axe-core on the new screens.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import { bodyText, clickButton, clickLink, selectByLabel, seriousViolations, waitForText } from '../helpers/ui-driver.ts'
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
  await waitForText(dev, 'change request made (open)')
  expect(((await (await api('GET', '/api/flags/shop/dark_mode?environment=production')).json()) as { enabled: boolean }).enabled).toBe(true)

  const lead = await suite.open('lead', 'lead-password-1')
  await clickLink(lead, 'Change requests')
  await clickButton(lead, 'Change shop/dark_mode: enabled')
  await waitForText(lead, 'What it changes in production')
  expect(await bodyText(lead)).toContain('enabled')
  expect(await seriousViolations(lead)).toEqual([])
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
  expect(await seriousViolations(p)).toEqual([])
})
