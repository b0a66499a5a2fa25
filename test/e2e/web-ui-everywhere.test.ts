/**
 * docs/ui.md#everywhere in Chromium: every page of the UI, on seeded data (flags in groups, three
 * environments with production protected, a rollout, a change request, an archived flag), at a
 * desktop (1440×900) and a phone (390×844), a request's own page, the review dialog and the
 * shortcuts included: axe-core finds no violation of any impact and nothing scrolls sideways. Destructive buttons are outlined until their confirmation. With
 * TEST_UPDATE_SCREENSHOTS=1 the Flags table at both sizes is written to docs/screenshots/.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import type { Page } from 'puppeteer-core'
import { allViolations, clickButton, clickLink, layoutWidth, selectByLabel, switchOf, visit, waitForText } from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

setDefaultTimeout(180_000)
const LONG = 'checkout/an_unusually_long_flag_name_no_phone_shows_on_one_line_whole'
const suite = browserSuite('ui-everywhere', async (ui) => {
  const ok = async (method: string, path: string, body?: unknown) => {
    const res = await ui.api(method, path, body)
    expect({ path, status: res.status, body: res.status < 300 ? '' : await res.text() }).toMatchObject({ path, body: '' })
  }
  await ok('PUT', '/api/environments/staging', { description: 'where releases are tried' })
  await ok('PUT', '/api/environments/production', { protected: true, requiredApprovals: 1 })
  await ok('PUT', '/api/segments/beta-testers', { description: 'asked for previews', rule: { in: [{ var: 'email' }, ['ada@shop.test']] } })
  await ok('POST', '/api/flags', { name: 'checkout/new_flow', type: 'BOOLEAN', value: true, description: 'the new checkout' })
  await ok('POST', '/api/flags', {
    name: LONG,
    type: 'STRING',
    value: 'a value far longer than any cell of a table on a phone would hold without wrapping or cutting it',
    description: 'a description that goes on and on, longer than the width of a phone, to see that it wraps or is cut',
  })
  await ok('POST', '/api/flags', { name: 'search/limits', type: 'OBJECT', value: { depth: 3, size: 20 } })
  await ok('POST', '/api/flags', { name: 'search/page_size', type: 'INTEGER', value: 20, enabled: false })
  await ok('POST', '/api/flags', { name: 'profile/old_avatar', type: 'BOOLEAN', value: false })
  await ok('POST', '/api/flags/profile/old_avatar/archive')
  await ok('POST', '/api/flags', {
    name: 'profile/ramp',
    type: 'BOOLEAN',
    value: false,
    rollout: { variant: 'true', start: '2020-01-01T00:00:00Z', end: '2099-01-01T00:00:00Z', fromPercent: 0, toPercent: 100 },
  })
  await ok('PUT', '/api/flags/checkout/new_flow?environment=staging', {
    targeting: { if: [{ in: [{ var: 'email' }, ['ada@shop.test']] }, 'true', null] },
  })
  await ok('POST', '/api/change-requests', {
    environment: 'production',
    title: 'Turn the new checkout off',
    changes: [{ flag: 'checkout/new_flow', set: { value: false } }],
  })
  await ok('POST', '/api/users', { username: 'viewer', password: 'viewer-password', permissions: ['flag:read'] })
  await ok('POST', '/api/tokens', { name: 'ci deploy', permissions: ['flag:read', 'flag:write'] })
  // a token limited to some flags and with an end date: its chips on the Tokens page are swept too
  await ok('POST', '/api/tokens', {
    name: 'mobile app',
    permissions: ['flag:evaluate'],
    flagPrefixes: ['mobile/'],
    expiresAt: '2027-06-01',
  })
})
const chromium = suite.chromium

const DESKTOP = { width: 1440, height: 900 }
const PHONE = { width: 390, height: 844 }

/** Every page, what shows it has loaded (a text, or an element), and what to do on it first (open a detail). */
const PAGES: { path: string; ready: string; first?: (p: Page) => Promise<void>; writes?: true }[] = [
  { path: '', ready: '[data-flag="search/limits"]' },
  { path: 'flags/checkout/new_flow', ready: 'History' },
  { path: `flags/${LONG}`, ready: 'History' },
  { path: 'flags/profile/ramp', ready: 'History' },
  { path: 'new', ready: 'Type' },
  { path: 'segments', ready: 'beta-testers' },
  { path: 'evaluate', ready: 'Context (JSON)' },
  { path: 'migrations', ready: 'Preview changes' },
  { path: 'users', ready: 'Add a user' },
  { path: 'tokens', ready: 'ci deploy' },
  { path: 'sessions', ready: '(this browser)' },
  { path: 'audit', ready: 'flag.created' },
  {
    path: 'compare',
    ready: 'Show differences',
    first: async (p) => {
      await clickButton(p, 'Show differences')
      await p.waitForSelector('table.differences')
    },
  },
  { path: 'change-requests?tab=open', ready: 'Turn the new checkout off' },
  {
    path: 'change-requests?tab=open',
    ready: 'Turn the new checkout off',
    first: async (p) => {
      await clickLink(p, 'Turn the new checkout off')
      await waitForText(p, 'What it changes in')
    },
  },
  { path: 'environments', ready: 'where releases are tried' },
  { path: 'account', ready: 'Change your password' },
  { path: '?archived=true', ready: '[data-flag="profile/old_avatar"]' },
  // the protected environment chosen: writes become requests (the choice stays for the pages after)
  {
    path: 'flags/checkout/new_flow',
    ready: 'History',
    first: async (p) => {
      await selectByLabel(p, 'Environment', 'production')
      await waitForText(p, 'History')
    },
  },
  { path: '', ready: '[data-flag="search/limits"]' },
  // a write to the protected environment: Review changes open over the Flags table
  {
    path: '',
    ready: '[data-flag="checkout/new_flow"]',
    writes: true,
    first: async (p) => {
      await p.click(switchOf('checkout/new_flow in production'))
      await p.waitForSelector('dialog[open]')
    },
  },
  // `?` on any page: the shortcuts
  {
    path: 'segments',
    ready: 'beta-testers',
    first: async (p) => {
      // keys reach a page that holds the focus: a link of the navigation takes it (as a person's click would)
      await p.focus('nav a')
      await p.keyboard.press('?')
      await p.waitForSelector('dialog.shortcuts[open]')
    },
  },
]

/** The innermost elements that reach past the right edge of the viewport (what makes a page scroll sideways). */
const pastTheEdge = (p: Page) =>
  p.evaluate(`[...document.querySelectorAll('body *')]
    .filter((el) => el.getBoundingClientRect().right > innerWidth + 0.5)
    .filter((el) => ![...el.children].some((c) => c.getBoundingClientRect().right > innerWidth + 0.5))
    .slice(0, 8)
    .map((el) => el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '') + ' ' + Math.round(el.getBoundingClientRect().right))`) as Promise<
    string[]
  >

/** Words that start the name of a button that destroys or stops something. */
const DESTRUCTIVE = /^(Delete|Remove|Revoke|Archive|End|Reject|Stop|Halt|Roll back|Discard)\b/

/**
 * The destructive buttons on the page that are filled or have no outline before their confirmation
 * (docs/ui.md#colours): the fill must be none or one of the page's own backgrounds, and a border shows.
 */
const loudDestructive = (p: Page) =>
  p.evaluate(`(() => {
    const backgrounds = new Set(['rgba(0, 0, 0, 0)'])
    for (const name of ['--surface', '--page', '--surface-sunken', '--surface-muted']) {
      const probe = document.createElement('i')
      probe.style.backgroundColor = 'var(' + name + ')'
      document.body.append(probe)
      backgrounds.add(getComputedStyle(probe).backgroundColor)
      probe.remove()
    }
    return [...document.querySelectorAll('button:not(.confirming)')]
      .map((b) => ({ name: (b.getAttribute('aria-label') ?? b.textContent ?? '').trim(), style: getComputedStyle(b) }))
      .filter(({ name }) => ${DESTRUCTIVE}.test(name))
      .filter(({ style }) => !backgrounds.has(style.backgroundColor) || style.borderTopStyle === 'none' || parseFloat(style.borderTopWidth) === 0)
      .map(({ name, style }) => name + ': fill ' + style.backgroundColor + ', border ' + style.borderTopWidth + ' ' + style.borderTopStyle)
  })()`) as Promise<string[]>

/** What the sweep finds wrong on the page now, at the viewport it is laid out for. */
async function problemsOn(p: Page, width: number): Promise<{ violations: string[]; sideways: string[]; loud: string[] }> {
  const sideways = (await layoutWidth(p)) > width ? await pastTheEdge(p) : []
  return { violations: await allViolations(p), sideways, loud: await loudDestructive(p) }
}
const anything = (found: { violations: string[]; sideways: string[]; loud: string[] }) =>
  found.violations.length + found.sideways.length + found.loud.length > 0

/** Visits each of `pages` in `p` and answers what is wrong on each at both sizes, by page and width. */
async function sweep(p: Page, pages: typeof PAGES): Promise<Record<string, unknown>> {
  const found: Record<string, unknown> = {}
  let previous: (typeof pages)[number] | undefined
  for (const page of pages) {
    const { path, ready, first } = page
    const href = `${suite.ui.d.url}/ui/${path}`
    await p.setViewport(DESKTOP)
    // reached in the app, as a link goes; loaded whole after a page's first step (a dialog it opened
    // would stay over the next page) and from one flag's page to another's (which keeps what it held)
    const load = previous?.first || (previous?.path.startsWith('flags/') && path.startsWith('flags/'))
    if (load) await p.goto(href)
    else if (previous || p.url() !== href) await visit(p, href)
    previous = page
    await (ready.startsWith('[') ? p.waitForSelector(ready) : waitForText(p, ready))
    await first?.(p)
    // the layout is CSS alone (no script reads the width): one load, laid out at both widths
    for (const viewport of [DESKTOP, PHONE]) {
      await p.setViewport(viewport)
      const problems = await problemsOn(p, viewport.width)
      const env = await p.$eval('#environment', (select) => (select as unknown as { value: string }).value).catch(() => '')
      if (anything(problems)) found[`/ui/${path} in ${env} at ${viewport.width}`] = problems
    }
  }
  return found
}

test.skipIf(!chromium)('every page at 1440×900 and 390×844: no axe-core violation of any impact, no sideways scroll', async () => {
  const found = await sweep(await suite.open('admin', 'admin-password', DESKTOP), PAGES)
  const signIn = suite.track(await suite.ui.browser.newPage())
  await signIn.goto(`${suite.ui.d.url}/ui/`)
  await waitForText(signIn, 'Sign in')
  for (const viewport of [DESKTOP, PHONE]) {
    await signIn.setViewport(viewport)
    const problems = await problemsOn(signIn, viewport.width)
    if (anything(problems)) found[`sign-in at ${viewport.width}`] = problems
  }
  expect(found).toEqual({})
})

test.skipIf(!chromium)('the pages of a person who may only read: the same at both sizes (switches they cannot use)', async () => {
  const reader = PAGES.filter(
    (page) => !page.writes && ['', 'flags/checkout/new_flow', 'segments', 'environments', 'account'].includes(page.path),
  )
  expect(await sweep(await suite.open('viewer', 'viewer-password', DESKTOP), reader)).toEqual({})
})

test.skipIf(!chromium)(
  'the Flags table at a desktop and a phone width, the chosen environment readable (docs/ui.md screenshots)',
  async () => {
    const p = await suite.open('admin', 'admin-password', DESKTOP)
    await p.waitForSelector('[data-flag="search/limits"]')
    await selectByLabel(p, 'Environment', 'development') // the sweep leaves production chosen
    await p.waitForSelector('tr[data-flag="search/limits"] td.env-cell.chosen[data-environment="development"]')
    const shots = process.env.TEST_UPDATE_SCREENSHOTS === '1' ? join(import.meta.dir, '../../docs/screenshots') : null
    if (shots) await p.screenshot({ path: join(shots, 'flags-desktop.png') })
    await p.setViewport(PHONE)
    expect(await layoutWidth(p)).toBeLessThanOrEqual(PHONE.width)
    // on a phone the name and the chosen environment's cell share the table: the cell is readable
    const chosen = (await p.evaluate(
      `document.querySelector('.flag-table thead th.env-head.chosen').getBoundingClientRect().width`,
    )) as number
    expect(chosen).toBeGreaterThanOrEqual(100)
    if (shots) await p.screenshot({ path: join(shots, 'flags-phone.png') })
  },
)

test.skipIf(!chromium)('the sweep sees what it looks for: a minor violation, a page too wide, a filled Delete button', async () => {
  const p = await suite.open('admin', 'admin-password', PHONE, 'account')
  await waitForText(p, 'Change your password')
  expect(anything(await problemsOn(p, PHONE.width))).toBe(false)
  await p.evaluate(`(() => {
    const main = document.querySelector('main')
    main.insertAdjacentHTML('beforeend', '<table><tr><th></th><td>x</td></tr></table>')
    const wide = document.createElement('div')
    wide.style.width = '600px' // the CSP refuses style attributes, not the CSSOM
    wide.textContent = 'wide'
    main.append(wide)
    main.insertAdjacentHTML('beforeend', '<button type="button">Delete everything</button>')
  })()`)
  const found = await problemsOn(p, PHONE.width)
  expect(found.violations.map((v) => v.split(':')[0])).toContain('empty-table-header (minor)')
  expect(found.sideways.length).toBeGreaterThan(0)
  expect(found.loud.map((l) => l.split(':')[0])).toEqual(['Delete everything'])
})
