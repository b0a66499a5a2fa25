/**
 * docs/ui.md#review-before-protected-changes: a new user on a flag's production tab rolled back to
 * revision 1 (its creation, an entry of every environment) and read "rolled back" while production
 * still served the change: the rollback had gone to the default environment. A shared entry now
 * restores into the environment the page shows, reviewed there when it is protected.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import { clickButton, selectByLabel } from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

setDefaultTimeout(90_000)
const DIALOG = 'dialog[open][aria-modal="true"]'
const suite = browserSuite('ui-rollback-chosen', async (ui) => {
  for (const env of ['staging', 'production']) expect((await ui.api('PUT', `/api/environments/${env}`, {})).status).toBe(201)
  expect((await ui.api('POST', '/api/flags', { name: 'mobile/push', type: 'BOOLEAN', value: false })).status).toBe(201)
  expect((await ui.api('PUT', '/api/flags/mobile/push?environment=production', { value: true })).status).toBe(200)
  expect((await ui.api('PUT', '/api/environments/production', { protected: true, requiredApprovals: 1 })).status).toBe(200)
  const dev = { username: 'dev', password: 'dev-password-1', permissions: ['flag:read', 'flag:write'] }
  expect((await ui.api('POST', '/api/users', dev)).status).toBe(201)
})
const chromium = suite.chromium
type Request = { environment: string; state: string; changes: { flag: string; set: Record<string, unknown> }[] }

test.skipIf(!chromium)('rolling back to the creation from the production tab restores production, through its review', async () => {
  const p = await suite.open('dev', 'dev-password-1')
  await p.goto(`${suite.ui.d.url}/ui/flags/mobile/push`)
  await selectByLabel(p, 'Environment', 'production')
  await clickButton(p, 'Roll back to revision 1')
  await clickButton(p, 'Restore revision 1 now')
  await p.waitForSelector(DIALOG)
  expect(await p.$eval(DIALOG, (d) => d.textContent ?? '')).toContain('value true → false')
  await clickButton(p, 'Request approval')
  await p.waitForSelector(`${DIALOG} .review-made a`)
  const made = (await (await suite.ui.api('GET', '/api/change-requests?flag=mobile/push')).json()) as Request[]
  expect(made.map((r) => [r.environment, r.state, r.changes[0]?.set.value])).toEqual([['production', 'open', false]])
})
