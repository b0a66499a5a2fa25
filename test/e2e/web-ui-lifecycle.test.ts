/**
 * docs/ui.md#lifecycle-archive-and-prerequisites in Chromium: kind, owner and tags shown and edited
 * on a flag's page; the list filtered by them and marking potentially stale flags with a reason;
 * Archive (confirmed) and the archived view with Restore; prerequisites in words, with links, and
 * edited by picking a flag and its variants; axe-core on each view.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import type { Page } from 'puppeteer-core'
import { eventually } from '../helpers/eventually.ts'
import { type AdminDaemon, startAdminDaemon } from '../helpers/test-daemon.ts'
import {
  allViolations,
  checkByLabel,
  clickButton,
  clickLink,
  fillByLabel,
  openSignedIn,
  selectByLabel,
  sessionOf,
  visit,
  waitForPath,
  waitForText,
} from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

// the callbacks below run in the page, where these exist
declare const document: {
  querySelectorAll(selector: string): Iterable<{ getAttribute(name: string): string | null; textContent: string | null }>
  querySelector(selector: string): { getAttribute(name: string): string | null; textContent: string | null } | null
}
declare const location: { search: string }

setDefaultTimeout(60_000)
const suite = browserSuite('ui-lifecycle', async (ui) => {
  const flags = [
    { name: 'shop/banner', type: 'BOOLEAN', value: false },
    { name: 'shop/old_flow', type: 'BOOLEAN', value: true, description: 'the checkout before 2026' },
    { name: 'team/a', type: 'BOOLEAN', value: true, kind: 'experiment', owner: 'team-a', tags: ['web', 'q4'] },
    { name: 'team/b', type: 'BOOLEAN', value: true, kind: 'experiment', owner: 'team-b', tags: ['web'] },
    { name: 'team/c', type: 'BOOLEAN', value: true, kind: 'operational', owner: 'team-a', tags: ['q4'] },
  ]
  for (const f of flags) expect((await ui.api('POST', '/api/flags', f)).status).toBe(201)
})
const chromium = suite.chromium
const api = (method: string, path: string, body?: unknown) => suite.ui.api(method, path, body)
const url = () => suite.ui.d.url
const read = async (name: string) => (await (await api('GET', `/api/flags/${name}`)).json()) as Record<string, unknown>

/** Waits until the list shows exactly `names` among the flags under `prefix`. */
async function waitForShown(p: Page, prefix: string, names: string[]): Promise<void> {
  await p.waitForFunction(
    (pre, want) =>
      JSON.stringify(
        [...document.querySelectorAll('.flag[data-flag]')]
          .map((row) => row.getAttribute('data-flag') ?? '')
          .filter((n) => n.startsWith(pre)),
      ) === want,
    { polling: 'mutation' },
    prefix,
    JSON.stringify(names),
  )
}

test.skipIf(!chromium)("kind, owner and tags are shown and edited on a flag's page; a refusal shows at its field", async () => {
  const p = await suite.open(undefined, undefined, undefined, 'flags/shop/banner')
  await waitForText(p, 'release flag')
  await selectByLabel(p, 'Kind', 'experiment')
  await fillByLabel(p, 'Owner', 'team-checkout')
  await fillByLabel(p, 'Tags', 'web, q4')
  await clickButton(p, 'Save')
  await waitForText(p, 'saved as revision')
  await waitForText(p, 'experiment flag · owned by team-checkout · tags web, q4')
  const saved = await read('shop/banner')
  expect({ kind: saved.kind, owner: saved.owner, tags: saved.tags }).toEqual({
    kind: 'experiment',
    owner: 'team-checkout',
    tags: ['web', 'q4'],
  })
  expect(await allViolations(p)).toEqual([])

  // a tag the service does not take: its reason at the Tags field, nothing saved
  await fillByLabel(p, 'Tags', 'web q4 ünicode')
  await clickButton(p, 'Save')
  await p.waitForFunction(
    () =>
      [...document.querySelectorAll('.field')].some(
        (f) => (f.textContent ?? '').startsWith('Tags') && (f.textContent ?? '').includes('A-Z a-z 0-9'),
      ),
    { polling: 'mutation' },
  )
  expect((await read('shop/banner')).revision).toBe(saved.revision)
})

test.skipIf(!chromium)('the list filters by kind, owner and tags (every tag typed)', async () => {
  const p = await suite.open()
  await waitForShown(p, 'team/', ['team/a', 'team/b', 'team/c'])
  await selectByLabel(p, 'Kind', 'experiment')
  await waitForShown(p, 'team/', ['team/a', 'team/b'])
  await selectByLabel(p, 'Owner', 'team-a')
  await waitForShown(p, 'team/', ['team/a'])
  await selectByLabel(p, 'Kind', '')
  await waitForShown(p, 'team/', ['team/a', 'team/c'])
  await selectByLabel(p, 'Owner', '')
  await fillByLabel(p, 'Tags (all of)', 'web q4')
  await waitForShown(p, 'team/', ['team/a'])
  await fillByLabel(p, 'Tags (all of)', 'q4')
  await waitForShown(p, 'team/', ['team/a', 'team/c'])
  expect(await allViolations(p)).toEqual([])
})

test.skipIf(!chromium)('Archive asks first; the archived view lists the flag with Restore, which brings it back', async () => {
  const p = await suite.open(undefined, undefined, undefined, 'flags/shop/old_flow')
  await waitForText(p, 'release flag')
  await clickButton(p, 'Archive')
  expect((await read('shop/old_flow')).archived).toBe(false) // the first click only asks
  await clickButton(p, 'Archive shop/old_flow')
  await waitForText(p, 'shop/old_flow archived')
  await waitForText(p, 'Every application gets FLAG_NOT_FOUND for it')
  expect((await read('shop/old_flow')).archived).toBe(true)

  await visit(p, `${url()}/ui/`)
  await waitForShown(p, 'shop/', ['shop/banner'])
  await clickLink(p, 'Archived flags')
  await p.waitForFunction(() => location.search === '?archived=true')
  await waitForShown(p, 'shop/', ['shop/old_flow'])
  await waitForText(p, 'the checkout before 2026')
  expect(await allViolations(p)).toEqual([])
  await clickButton(p, 'Restore shop/old_flow')
  await waitForText(p, 'shop/old_flow restored')
  await waitForText(p, 'No archived flags.')
  expect((await read('shop/old_flow')).archived).toBe(false)
  await clickLink(p, '← All flags')
  await waitForPath(p, '/ui/')
  await waitForShown(p, 'shop/', ['shop/banner', 'shop/old_flow'])
})

test.skipIf(!chromium)(
  'someone who may write flags in one environment only sees kind, owner and tags but cannot change or archive',
  async () => {
    expect((await api('PUT', '/api/environments/qa', { description: 'the qa one' })).status).toBe(201)
    const tess = { username: 'tess', password: 'tess-password-1', permissions: ['flag:read', 'flag:write@qa'] }
    expect((await api('POST', '/api/users', tess)).status).toBe(201)
    const p = await suite.open(tess.username, tess.password)
    // in qa, where tess may write: the form is hers, the shared fields are not hers to change
    await selectByLabel(p, 'Environment', 'qa')
    await visit(p, `${url()}/ui/flags/team/a`)
    await waitForText(p, 'Has a value')
    const save = await p.evaluate(() => [...document.querySelectorAll('button')].some((b) => b.textContent === 'Save'))
    expect(save).toBe(true)
    await waitForText(p, 'experiment flag · owned by team-a · tags web, q4')
    const disabled = await p.evaluate(() =>
      ['#f-kind', '#f-owner', '#f-tags'].map((id) =>
        (document.querySelector(id) as unknown as { matches(s: string): boolean }).matches(':disabled'),
      ),
    )
    expect(disabled).toEqual([true, true, true])
    expect(await p.evaluate(() => [...document.querySelectorAll('button')].some((b) => b.textContent === 'Archive'))).toBe(false)
  },
)

describeStale()

/**
 * The "potentially stale" mark needs a flag older than its kind's lifetime: a daemon of its own whose
 * operational flags live 0 days, in the suite's browser.
 */
function describeStale() {
  let d: AdminDaemon | undefined
  beforeAll(async () => {
    if (!chromium) return
    d = await startAdminDaemon({ FLAGD_LIFECYCLE_OPERATIONAL_DAYS: '0' })
    expect((await d.api('POST', '/api/flags', { name: 'ops/old_switch', type: 'BOOLEAN', kind: 'operational' })).status).toBe(201)
    expect((await d.api('POST', '/api/flags', { name: 'ops/kept', type: 'BOOLEAN', kind: 'kill-switch' })).status).toBe(201)
    // potentiallyStale is worked out when read: once the API says so, the UI has it to show
    const stale = async () =>
      ((await (await d!.api('GET', '/api/flags/ops/old_switch')).json()) as { potentiallyStale: boolean }).potentiallyStale
    await eventually(stale, { what: () => 'ops/old_switch potentially stale' })
  })
  afterAll(async () => {
    await d?.stop()
  })
  test.skipIf(!chromium)('potentially stale flags carry a visible mark whose title says why; the State filter finds them', async () => {
    const p = suite.track(await openSignedIn(suite.ui.browser, d!.url, await sessionOf(d!.url, 'admin', 'admin-password')))
    await p.waitForSelector('tr.flag[data-flag="ops/old_switch"] .chip.old')
    const mark = async (name: string) =>
      p.evaluate((n) => {
        const chip = document.querySelector(`tr.flag[data-flag="${n}"] .chip.old`)
        return chip ? `${chip.textContent} | ${chip.getAttribute('title')}` : null
      }, name)
    expect(await mark('ops/old_switch')).toStartWith(
      "potentially stale | Older than its kind's lifetime: an operational flag is expected to live",
    )
    expect(await mark('ops/kept')).toBeNull()
    await selectByLabel(p, 'State', 'old')
    await waitForShown(p, 'ops/', ['ops/old_switch'])
    expect(await allViolations(p)).toEqual([])
    await visit(p, `${d!.url}/ui/flags/ops/old_switch`)
    await waitForText(p, 'operational flag potentially stale')
  })
}

/** checkout/new_api (variants on/off), required to be on by checkout/page; checkout/summary requires nothing. */
async function seedPrerequisites(): Promise<void> {
  const onOff = { on: true, off: false }
  expect((await api('POST', '/api/flags', { name: 'checkout/new_api', type: 'BOOLEAN', variants: onOff, value: true })).status).toBe(201)
  expect((await api('POST', '/api/flags', { name: 'checkout/summary', type: 'BOOLEAN', variants: onOff, value: true })).status).toBe(201)
  const page = { name: 'checkout/page', type: 'BOOLEAN', value: true, prerequisites: [{ flag: 'checkout/new_api', variants: ['on'] }] }
  expect((await api('POST', '/api/flags', page)).status).toBe(201)
}

test.skipIf(!chromium)('a flag page says "Requires <flag> to be <variants>" and "Required by …", each flag a link', async () => {
  await seedPrerequisites()
  const p = await suite.open(undefined, undefined, undefined, 'flags/checkout/page')
  await waitForText(p, 'Requires checkout/new_api to be on')
  await waitForText(p, 'No flag requires it.')
  expect(await allViolations(p)).toEqual([])
  await clickLink(p, 'checkout/new_api')
  await waitForPath(p, '/ui/flags/checkout/new_api')
  await waitForText(p, 'Required by checkout/page')
  // words typed on one flag's page and not saved stay with it: the linked flag's page shows its own
  await fillByLabel(p, 'Description', 'words not saved on new_api')
  await clickLink(p, 'checkout/page')
  await waitForPath(p, '/ui/flags/checkout/page')
  await waitForText(p, 'Requires checkout/new_api to be on')
  const description = await p.$eval('#f-description', (e) => (e as unknown as { value: string }).value)
  expect(description).not.toBe('words not saved on new_api')
  expect(description).toBe(String((await read('checkout/page')).description ?? ''))
})

test.skipIf(!chromium)('prerequisites are edited by picking a flag and ticking its variants; a cycle is refused in the card', async () => {
  const p = await suite.open(undefined, undefined, undefined, 'flags/checkout/summary')
  await waitForText(p, 'Requires no other flag.')
  await clickButton(p, 'Add prerequisite')
  await selectByLabel(p, 'Prerequisite 1 flag', 'checkout/new_api')
  // the flag's own variants and the built-in ones
  await checkByLabel(p, 'checkout/new_api is on', true)
  await checkByLabel(p, 'checkout/new_api is true', true)
  await clickButton(p, 'Save prerequisites')
  await waitForText(p, 'prerequisites saved as revision')
  await waitForText(p, 'Requires checkout/new_api to be true or on')
  expect((await read('checkout/summary')).prerequisites).toEqual([{ flag: 'checkout/new_api', variants: ['true', 'on'] }])
  expect(await allViolations(p)).toEqual([])

  // checkout/new_api requiring checkout/summary would close a cycle: refused, shown at the prerequisite, nothing saved
  await visit(p, `${url()}/ui/flags/checkout/new_api`)
  await waitForText(p, 'Required by checkout/page, checkout/summary')
  const before = (await read('checkout/new_api')).revision
  await clickButton(p, 'Add prerequisite')
  await selectByLabel(p, 'Prerequisite 1 flag', 'checkout/summary')
  await checkByLabel(p, 'checkout/summary is on', true)
  await clickButton(p, 'Save prerequisites')
  // the service's message, which names the cycle's members, in the card
  await p.waitForFunction(() => (document.querySelector('.prerequisites .error')?.textContent ?? '').includes('checkout/summary'), {
    polling: 'mutation',
  })
  expect((await read('checkout/new_api')).revision).toBe(before)

  // removing it again: no prerequisites. The page's loads settle first (one that lands after the
  // removal redraws the card as saved), and Save is clicked once the removal has enabled it.
  await p.goto(`${url()}/ui/flags/checkout/summary`, { waitUntil: 'networkidle2' })
  await waitForText(p, 'Requires checkout/new_api to be true or on')
  await clickButton(p, 'Remove prerequisite 1')
  await p.waitForFunction(
    `[...document.querySelectorAll('button')].some((b) => b.textContent.trim() === 'Save prerequisites' && !b.disabled)`,
    { polling: 'mutation' },
  )
  await clickButton(p, 'Save prerequisites')
  await waitForText(p, 'Requires no other flag.')
  expect((await read('checkout/summary')).prerequisites ?? []).toEqual([])
})

test.skipIf(!chromium)('archiving a flag others require is refused with a message naming them', async () => {
  const p = await suite.open(undefined, undefined, undefined, 'flags/checkout/new_api')
  await waitForText(p, 'Required by checkout/page')
  await clickButton(p, 'Archive')
  await clickButton(p, 'Archive checkout/new_api')
  await waitForText(p, 'checkout/new_api cannot be archived:')
  const notice = await p.evaluate(() => document.querySelector('.quiet-zone .error')?.textContent ?? '')
  expect(notice).toContain('checkout/page')
  expect((await read('checkout/new_api')).archived).toBe(false)
})
