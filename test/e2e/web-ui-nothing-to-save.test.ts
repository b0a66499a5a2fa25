/**
 * docs/ui.md#a-flags-page: a new user edited a variant, then pressed the settings form's Save (the
 * variants have their own Save variants) and read "saved as revision 1" though nothing was written.
 * A Save that changes nothing says so, and names the buttons that save the other cards.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import { clickButton, clickLink, fillByLabel, waitForText } from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

setDefaultTimeout(90_000)
const suite = browserSuite('ui-nothing-to-save', async (ui) => {
  const flag = { name: 'ui/greeting', type: 'STRING', value: 'hi', variants: { formal: 'Good day', casual: 'hi' } }
  expect((await ui.api('POST', '/api/flags', flag)).status).toBe(201)
})
const chromium = suite.chromium

test.skipIf(!chromium)('a Save that changes nothing says nothing was saved, not "saved as revision 1"', async () => {
  const p = await suite.open()
  await clickLink(p, 'greeting')
  await fillByLabel(p, 'Variant 1 value', 'Good morning')
  await clickButton(p, 'Save')
  await waitForText(p, 'nothing to save')
  const said = await p.$eval('body', (b) => b.textContent ?? '')
  expect(said).not.toContain('saved as revision 1')
  expect(said).toContain('Save variants')
  const flag = (await (await suite.ui.api('GET', '/api/flags/ui/greeting')).json()) as { revision: number; variants: unknown }
  expect(flag).toMatchObject({ revision: 1, variants: { formal: 'Good day', casual: 'hi' } })
})
