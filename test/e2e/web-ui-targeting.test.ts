/**
 * docs/ui.md#targeting-without-json in Chromium: a rule of three conditions and a 20/80 split built without JSON, then
 * evaluated through OFREP and on the evaluate page; a hand-written rule saved unchanged; the
 * service's message at the place of a bad JSON rule; the Enabled switch; segments made, edited and
 * refused deletion while used; a change made elsewhere shown live; axe-core on the new pages.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import type { Page } from 'puppeteer-core'
import {
  allViolations,
  bodyText,
  clickButton,
  clickLink,
  fillByLabel,
  layoutWidth,
  selectByLabel,
  visit,
  waitForSwitch,
  waitForText,
} from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

// the callbacks below run in the page, where these exist
declare const document: {
  querySelector(selector: string): { getAttribute(name: string): string | null } | null
  querySelectorAll(selector: string): Iterable<{
    textContent: string | null
    htmlFor?: string
    querySelector(s: string): { textContent: string | null } | null
    querySelectorAll(s: string): Iterable<{ textContent: string | null; htmlFor?: string }>
  }>
}

setDefaultTimeout(60_000)
const suite = browserSuite('ui-targeting', async (ui) => {
  await ui.api('PUT', '/api/segments/beta-testers', {
    description: 'asked for previews',
    rule: { in: [{ var: 'email' }, ['ada@shop.test']] },
  })
  await ui.api('POST', '/api/flags', {
    name: 'shop/new-checkout',
    type: 'BOOLEAN',
    variants: { on: true, off: false },
    description: 'the new checkout',
  })
})
const chromium = suite.chromium
const api = (method: string, path: string, body?: unknown) => suite.ui.api(method, path, body)
const json = async (method: string, path: string, body?: unknown) =>
  (await (await api(method, path, body)).json()) as Record<string, unknown>
const ofrep = (key: string, context: Record<string, unknown>) => json('POST', `/ofrep/v1/evaluate/flags/${key}`, { context })
const open = (viewport?: { width: number; height: number }, path?: string) => suite.open('admin', 'admin-password', viewport, path)
const url = () => suite.ui.d.url

/** Fills the control labelled `label` inside the group (fieldset) whose legend is `group`. */
async function fillIn(p: Page, group: string, label: string, value: string, select = false): Promise<void> {
  const id = await p.waitForFunction(
    (g, l) => {
      const set = [...document.querySelectorAll('fieldset')].find((f) => f.querySelector('legend')?.textContent === g)
      return [...(set?.querySelectorAll('label') ?? [])].find((x) => x.textContent === l)?.htmlFor || false
    },
    {},
    group,
    label,
  )
  const selector = `#${(await id.jsonValue()) as string}`
  if (select) await p.select(selector, value)
  else {
    const input = await p.waitForSelector(selector)
    await input!.click({ count: 3 })
    await p.keyboard.press('Backspace')
    await input!.type(value)
  }
}

test.skipIf(!chromium)('three rules and a 20/80 split built without JSON answer through OFREP and on the evaluate page', async () => {
  const p = await open(undefined, 'flags/shop/new-checkout')
  await waitForText(p, 'No rule')
  await clickButton(p, 'Edit')
  await clickButton(p, 'Add rule')
  await fillIn(p, 'Rule 1', 'Attribute', 'email')
  await fillIn(p, 'Rule 1', 'Operator', 'ends with', true)
  await fillIn(p, 'Rule 1', 'Value', '@example.com')
  await fillIn(p, 'Rule 1', 'Serve', 'on', true)
  await clickButton(p, 'Add rule')
  await fillIn(p, 'Rule 2', 'Attribute', 'country')
  await fillIn(p, 'Rule 2', 'Operator', 'one of', true)
  await fillIn(p, 'Rule 2', 'Value', 'DE, FR')
  await fillIn(p, 'Rule 2', 'Serve', 'off', true)
  await clickButton(p, 'Add rule')
  await fillIn(p, 'Rule 3', 'Operator', 'in segment', true)
  await fillIn(p, 'Rule 3', 'Value', 'beta-testers', true)
  await fillIn(p, 'Rule 3', 'Serve', 'on', true)
  await clickButton(p, 'Add split')
  await fillByLabel(p, 'on %', '20')
  await fillByLabel(p, 'off %', '80')
  await clickButton(p, 'Save targeting')
  await waitForText(p, 'targeting saved as revision 2')
  await waitForText(p, 'otherwise 20 % on, 80 % off, sticky by targetingKey')

  const saved = await json('GET', '/api/flags/shop/new-checkout')
  expect(saved.targeting).toEqual({
    if: [
      { ends_with: [{ var: 'email' }, '@example.com'] },
      'on',
      { in: [{ var: 'country' }, ['DE', 'FR']] },
      'off',
      { $ref: 'beta-testers' },
      'on',
      {
        fractional: [
          ['on', 20],
          ['off', 80],
        ],
      },
    ],
  })
  expect(await ofrep('shop/new-checkout', { targetingKey: 'u1', email: 'bo@example.com', country: 'DE' })).toMatchObject({
    value: true,
    variant: 'on',
    reason: 'TARGETING_MATCH',
  })
  expect(await ofrep('shop/new-checkout', { targetingKey: 'u2', email: 'cy@other.test', country: 'FR' })).toMatchObject({ variant: 'off' })
  // the split: about a fifth of users get "on"
  let on = 0
  for (let i = 0; i < 400; i++) if ((await ofrep('shop/new-checkout', { targetingKey: `user-${i}` })).variant === 'on') on++
  expect(on / 400).toBeGreaterThan(0.14)
  expect(on / 400).toBeLessThan(0.26)

  // the evaluate page gives the same answer and says why
  await clickLink(p, 'Evaluate for a context')
  await waitForText(p, 'Context (JSON)')
  await fillByLabel(p, 'Context (JSON)', '{"targetingKey": "u2", "email": "cy@other.test", "country": "FR"}')
  await clickButton(p, 'Evaluate')
  await p.waitForSelector('section[aria-label="Result"]')
  const result = await p.$eval('section[aria-label="Result"]', (r) => r.textContent ?? '')
  expect(result).toContain('false')
  expect(result).toContain('off')
  expect(result).toContain('TARGETING_MATCH')
  expect(result).toContain('Rule 1: email ends with "@example.com": not matched')
  expect(result).toContain('Rule 2: country is one of "DE", "FR": matched')
  await fillByLabel(p, 'Context (JSON)', '{"targetingKey": "user-7", "email": "ada@shop.test"}')
  await clickButton(p, 'Evaluate')
  await waitForText(p, 'segment beta-testers matched')

  // the builder reads back what it wrote: the same rows, unchanged on a second save
  await visit(p, `${url()}/ui/flags/shop/new-checkout`)
  await clickButton(p, 'Edit')
  await waitForText(p, 'Rule 3')
  expect(await p.$eval('#rule-2-c1-value', (i) => (i as unknown as { value: string }).value)).toBe('DE, FR')
  await clickButton(p, 'Save targeting')
  await waitForText(p, 'targeting saved as revision 2')
})

test.skipIf(!chromium)(
  'a hand-written rule opens as JSON and is saved exactly as it was; a bad one shows the message at its line',
  async () => {
    const rule = { if: [{ '>=': [{ var: 'age' }, 18] }, 'adult', { if: [{ var: 'guardian' }, 'adult', 'child'] }] }
    await api('POST', '/api/flags', { name: 'shop/age-gate', type: 'STRING', variants: { adult: 'full', child: 'kids' }, targeting: rule })
    const p = await open(undefined, 'flags/shop/age-gate')
    await clickButton(p, 'Edit')
    await waitForText(p, 'Rule (JSON)')
    expect(await bodyText(p)).toContain('cannot show this rule exactly')
    await clickButton(p, 'Save targeting')
    await waitForText(p, 'targeting saved as revision 1') // nothing to change: the same revision
    expect((await json('GET', '/api/flags/shop/age-gate')).targeting).toEqual(rule)

    // saved, the page shows the rule in words again; Edit opens it once more
    await clickButton(p, 'Edit')
    await p.waitForSelector('#targeting-json')
    const bad = JSON.stringify({ if: [{ $ref: 'nobody' }, 'adult', 'teen'] }, null, 2)
    await p.$eval(
      '#targeting-json',
      (t, v) => {
        const area = t as unknown as { value: string; dispatchEvent(e: Event): boolean }
        area.value = v
        area.dispatchEvent(new Event('input', { bubbles: true }))
      },
      bad,
    )
    await clickButton(p, 'Save targeting')
    await waitForText(p, 'segment nobody does not exist')
    const problems = await p.$eval('#targeting-json-problems', (u) => u.textContent ?? '')
    expect(problems).toContain('line 4, targeting.if[0].$ref: segment nobody does not exist')
    expect(problems).toContain('line 7, targeting.if[2]: "teen" is not a variant of this flag')
    await clickButton(p, 'Show where: targeting.if[0].$ref')
    const selected = await p.$eval('#targeting-json', (t) => {
      const a = t as unknown as { value: string; selectionStart: number; selectionEnd: number }
      return a.value.slice(a.selectionStart, a.selectionEnd)
    })
    expect(selected).toBe('"nobody"')
    expect((await json('GET', '/api/flags/shop/age-gate')).targeting).toEqual(rule) // nothing changed
  },
)

test.skipIf(!chromium)(
  'the Enabled switch: off makes OFREP answer DISABLED and keeps the rule; a change made elsewhere shows live',
  async () => {
    await api('POST', '/api/flags', {
      name: 'shop/banner',
      type: 'STRING',
      value: 'summer',
      variants: { a: 'spring' },
      targeting: { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'a'] },
    })
    const p = await open(undefined, 'flags/shop/banner')
    await waitForSwitch(p, 'Enabled', true)
    await p.click('[role="switch"][aria-label="Enabled"]')
    await waitForSwitch(p, 'Enabled', false)
    expect(await ofrep('shop/banner', { plan: 'pro' })).toEqual({ key: 'shop/banner', reason: 'DISABLED', metadata: expect.any(Object) })
    expect((await json('GET', '/api/flags/shop/banner')).targeting).toEqual({ if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'a'] })
    expect(await bodyText(p)).toContain('OFREP reason DISABLED')

    // elsewhere: enabled again and the rule changed; the page follows without a reload
    await api('PUT', '/api/flags/shop/banner', { enabled: true, targeting: { if: [{ '==': [{ var: 'plan' }, 'team'] }, 'a'] } })
    await waitForSwitch(p, 'Enabled', true)
    await waitForText(p, 'if plan is "team" → a')
    expect(await ofrep('shop/banner', { plan: 'team' })).toMatchObject({ value: 'spring', reason: 'TARGETING_MATCH' })
  },
)

test.skipIf(!chromium)('segments: created with the builder, used by a flag, its deletion refused naming the flag', async () => {
  const p = await open()
  await clickLink(p, 'Segments')
  await fillByLabel(p, 'Segment name', 'staff')
  await fillByLabel(p, 'Attribute', 'email')
  await selectByLabel(p, 'Operator', 'ends with')
  await fillByLabel(p, 'Value', '@shop.test')
  await clickButton(p, 'Save segment')
  await waitForText(p, 'created segment staff')
  expect(await json('GET', '/api/segments/staff')).toMatchObject({ rule: { ends_with: [{ var: 'email' }, '@shop.test'] } })
  await api('POST', '/api/flags', { name: 'shop/staff-tools', type: 'BOOLEAN', targeting: { if: [{ $ref: 'staff' }, 'true'] } })
  await p.reload()
  await waitForText(p, 'Used by shop/staff-tools')
  await clickButton(p, 'Delete staff')
  await clickButton(p, 'Delete segment staff for good')
  // the refusal's own line (the page already named the flag under "Used by" before the click)
  await p.waitForSelector('[role="status"]')
  const refusal = await p.$eval('[role="status"]', (s) => s.textContent ?? '')
  expect(refusal).toContain('shop/staff-tools')
  expect((await api('GET', '/api/segments/staff')).status).toBe(200)

  // made elsewhere: shown without a reload
  await api('PUT', '/api/segments/partners', { description: 'resellers', rule: { in: [{ var: 'plan' }, ['reseller']] } })
  await waitForText(p, 'plan is one of "reseller"')

  await clickButton(p, 'Edit staff')
  await selectByLabel(p, 'Match', 'or')
  await clickButton(p, 'Add condition')
  await fillByLabel(p, 'Attribute 2', 'role')
  await selectByLabel(p, 'Operator 2', 'equals')
  await fillByLabel(p, 'Value 2', 'admin')
  await clickButton(p, 'Save segment')
  await waitForText(p, 'saved segment staff')
  expect((await json('GET', '/api/segments/staff')).rule).toEqual({
    or: [{ ends_with: [{ var: 'email' }, '@shop.test'] }, { '==': [{ var: 'role' }, 'admin'] }],
  })
  expect(await ofrep('shop/staff-tools', { role: 'admin' })).toMatchObject({ value: true })
})

test.skipIf(!chromium)('the targeting pages: no accessibility problem, no sideways scrolling on a phone', async () => {
  // with TEST_UPDATE_SCREENSHOTS=1 the README's pictures of these pages are taken at desktop width
  const docs = process.env.TEST_UPDATE_SCREENSHOTS === '1' ? join(import.meta.dir, '../../docs/screenshots') : undefined
  // the UI's layout is CSS alone (no script reads the width), so each page is loaded once and
  // checked at both widths: resizing lays it out as a load at that width would
  const WIDTHS = [
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ]
  const p = await open(undefined, 'flags/shop/new-checkout')
  // a flag's page is checked with its editor open (after Edit): the builder, or the JSON editor
  for (const [path, ready] of [
    ['flags/shop/new-checkout', 'Save targeting'],
    // another page between the two flags: a flag's page reached from another keeps its open editor
    ['segments', 'New segment'],
    ['flags/shop/age-gate', 'Rule (JSON)'],
  ] as const) {
    if (new URL(p.url()).pathname !== `/ui/${path}`) await visit(p, `${url()}/ui/${path}`)
    if (path.startsWith('flags/')) await clickButton(p, 'Edit')
    await waitForText(p, ready)
    for (const viewport of WIDTHS) {
      await p.setViewport(viewport)
      expect({ path, width: viewport.width, violations: await allViolations(p) }).toEqual({
        path,
        width: viewport.width,
        violations: [],
      })
      expect(await layoutWidth(p)).toBeLessThanOrEqual(viewport.width)
      if (docs && viewport.width === 1280 && path === 'flags/shop/new-checkout') {
        // the window's size, scrolled to the targeting card: a picture of one screen, not the whole page
        await p.$eval('section[aria-label="Targeting"]', (card) => (card as unknown as { scrollIntoView(): void }).scrollIntoView())
        await p.screenshot({ path: join(docs, 'targeting.png') })
        await p.evaluate('scrollTo(0, 0)')
      }
      if (docs && viewport.width === 1280 && path === 'segments') await p.screenshot({ path: join(docs, 'segments.png') })
    }
  }
  await p.setViewport(WIDTHS[0]!)
  await visit(p, `${url()}/ui/evaluate?flag=shop/new-checkout`)
  await waitForText(p, 'Context (JSON)')
  await fillByLabel(p, 'Context (JSON)', '{"targetingKey": "user-3", "email": "cy@other.test", "country": "IT"}')
  await clickButton(p, 'Evaluate')
  await p.waitForSelector('section[aria-label="Result"]')
  for (const viewport of WIDTHS) {
    await p.setViewport(viewport)
    if (docs && viewport.width === 1280) await p.screenshot({ path: join(docs, 'evaluate.png') })
    expect({ path: 'evaluate', width: viewport.width, violations: await allViolations(p) }).toEqual({
      path: 'evaluate',
      width: viewport.width,
      violations: [],
    })
    expect(await layoutWidth(p)).toBeLessThanOrEqual(viewport.width)
  }
})

test.skipIf(!chromium)(
  'the flag list: targeting in a few words, disabled flags marked, filters by rules, state and type, sorted by last change',
  async () => {
    await api('POST', '/api/flags', {
      name: 'list/rollout',
      type: 'BOOLEAN',
      description: 'gradual rollout',
      variants: { on: true, off: false },
      targeting: {
        if: [
          { '==': [{ var: 'plan' }, 'pro'] },
          'on',
          {
            fractional: [
              ['on', 20],
              ['off', 80],
            ],
          },
        ],
      },
    })
    await api('POST', '/api/flags', { name: 'list/plain', type: 'INTEGER', value: 3, enabled: false })
    const p = await open()
    await waitForText(p, '20 % on · 1 rule')
    const row = await p.$eval('tr[data-flag="list/rollout"]', (li) => li.textContent ?? '')
    expect(row).toContain('gradual rollout')
    expect(await p.$eval('tr[data-flag="list/plain"]', (li) => li.textContent ?? '')).toContain('disabled')
    await p.click('#filter-rules')
    await p.waitForFunction(() => !document.querySelector('tr[data-flag="list/plain"]'))
    expect(await p.$('tr[data-flag="list/rollout"]')).not.toBeNull()
    await p.click('#filter-rules')
    await selectByLabel(p, 'State', 'disabled')
    await p.waitForFunction(() => !document.querySelector('tr[data-flag="list/rollout"]'))
    expect(await p.$('tr[data-flag="list/plain"]')).not.toBeNull()
    await selectByLabel(p, 'State', '')
    await selectByLabel(p, 'Type', 'INTEGER')
    await p.waitForFunction(() => !document.querySelector('tr[data-flag="list/rollout"]'))
    await selectByLabel(p, 'Type', '')
    await api('PUT', '/api/flags/list/rollout', { description: 'gradual rollout, now' })
    await selectByLabel(p, 'Sort by', 'changed')
    await p.waitForFunction(
      () => document.querySelector('table[aria-label="Flags by last change"] tr.flag')?.getAttribute('data-flag') === 'list/rollout',
    )
  },
)

test.skipIf(!chromium)(
  'variants: added with the input of the type, a bad value refused with the message at the variant, a rule serves them',
  async () => {
    await api('POST', '/api/flags', { name: 'shop/limit', type: 'INTEGER', value: 1, maxValue: 5 })
    const p = await open(undefined, 'flags/shop/limit')
    await waitForText(p, 'Variants')
    await clickButton(p, 'Add variant')
    await fillByLabel(p, 'Variant 1 name', 'big')
    await fillByLabel(p, 'Variant 1 value', '9')
    await clickButton(p, 'Save variants')
    await waitForText(p, '9 is above maxValue 5')
    const near = await p.$eval('#variant-0-value', (el) => el.parentElement?.textContent ?? '')
    expect(near).toContain('9 is above maxValue 5')
    await fillByLabel(p, 'Variant 1 value', '4')
    await clickButton(p, 'Save variants')
    await waitForText(p, 'variants saved as revision 2')
    expect((await json('GET', '/api/flags/shop/limit')).variants).toEqual({ big: 4 })
    // the new variant is offered at once to the builder
    await clickButton(p, 'Edit')
    await clickButton(p, 'Add rule')
    await fillIn(p, 'Rule 1', 'Attribute', 'plan')
    await fillIn(p, 'Rule 1', 'Value', 'pro')
    await fillIn(p, 'Rule 1', 'Serve', 'big', true)
    await clickButton(p, 'Save targeting')
    await waitForText(p, 'targeting saved as revision 3')
    expect(await ofrep('shop/limit', { plan: 'pro' })).toMatchObject({ value: 4, variant: 'big', reason: 'TARGETING_MATCH' })
    expect(await ofrep('shop/limit', { plan: 'free' })).toMatchObject({ value: 1, reason: 'DEFAULT' })
  },
)

test.skipIf(!chromium)(
  "usage: a flag's page charts its last 7 days and says when it was last evaluated; the list shows uses and filters stale flags",
  async () => {
    await api('POST', '/api/flags', { name: 'usage/counted', type: 'BOOLEAN', value: true })
    for (let i = 0; i < 3; i++) await ofrep('usage/counted', {})
    const p = await open(undefined, 'flags/usage/counted')
    await waitForText(p, 'Last evaluated')
    const chart = await p.$eval('svg.usage-chart', (svg) => svg.getAttribute('aria-label') ?? '')
    expect(chart).toContain('3 evaluations in 7 days')
    expect(await p.$$eval('svg.usage-chart rect', (bars) => bars.length)).toBe(7)
    await visit(p, `${url()}/ui/`)
    // the Uses column counts its evaluations
    await p.waitForFunction(`document.querySelector('tr[data-flag="usage/counted"] .uses')?.textContent === '3'`)
    await selectByLabel(p, 'State', 'stale')
    await p.waitForFunction(() => !document.querySelector('tr[data-flag="usage/counted"]'))
    expect({ violations: await allViolations(p) }).toEqual({ violations: [] })
  },
)
