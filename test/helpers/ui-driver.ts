/**
 * Drives the web UI in Chromium the way a person (or a screen reader) finds things: form controls by
 * their <label>, buttons by their accessible name, switches by aria-label, progress by visible text
 * and the address bar. puppeteer-core's own ARIA selectors and Locator actions hang with Debian's
 * Chromium 150, so these helpers wait with plain page functions instead.
 */

import { readFileSync, rmSync } from 'node:fs'
import type { AxeResults } from 'axe-core'
import type { Browser, Page } from 'puppeteer-core'

/**
 * The few browser globals the page functions below touch. Those functions run in Chromium, not in
 * Bun; loading the whole DOM library into the project would clash with bun-types.
 */
interface PageElement {
  textContent: string | null
  htmlFor?: string
  value?: string
  getAttribute(name: string): string | null
}
declare const document: {
  querySelector(selector: string): PageElement | null
  querySelectorAll(selector: string): Iterable<PageElement>
  body: PageElement
  documentElement: { scrollWidth: number }
  cookie: string
}
declare const location: { pathname: string; search: string; origin: string }
declare const navigator: { clipboard: { readText(): Promise<string> } }

/** The Chromium on the PATH; in CI (TEST_REQUIRE_BROWSER=1) a missing browser is a failure, not a skip. */
export function findChromium(): string | null {
  const found = Bun.which('chromium') ?? Bun.which('chromium-browser') ?? Bun.which('google-chrome')
  if (!found && process.env.TEST_REQUIRE_BROWSER === '1') throw new Error('no chromium on the PATH: install Debian\'s package "chromium"')
  return found
}

/**
 * Waits whose condition reads only the document re-check it when the document changes (a
 * MutationObserver), not on every animation frame: an event, not a poll.
 */
const ON_CHANGE = { polling: 'mutation' } as const

/**
 * Waits until `find(...args)`, run in the page, answers something, and answers its handle. Like
 * `waitForFunction(find, ON_CHANGE)`, but the page's own MutationObserver also watches text changed
 * in place: puppeteer's watches elements and attributes only, and Preact updates a text by changing
 * its node's data (a tab's "production · on" becoming "production · on · 1 pending"), which it would
 * not see until something else moved. `args` cross as JSON.
 */
function untilFound<A extends unknown[]>(p: Page, find: (...args: A) => unknown, ...args: A) {
  const expression = `new Promise((resolve) => {
    const find = () => (${find.toString()})(...${JSON.stringify(args)});
    const hit = find();
    if (hit) return resolve(hit);
    const watch = new MutationObserver(() => {
      const found = find();
      if (found) { watch.disconnect(); resolve(found); }
    });
    watch.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
  })`
  return p.waitForFunction(expression, ON_CHANGE)
}

/**
 * Presses the element `found` holds as a person's click does: it takes the focus, then gets the
 * click. Done in the page rather than with the mouse at the element's coordinates: a card that
 * loads above it (a flag page's usage and history) can move it between puppeteer measuring its box
 * and the mouse arriving, and the click then lands on whatever moved there.
 */
async function press(found: unknown): Promise<void> {
  await (found as { evaluate(fn: (el: { focus(): void; click(): void }) => void): Promise<void> }).evaluate((el) => {
    el.focus()
    el.click()
  })
}

/** Waits for the <label> reading `text` and answers the id of the control it labels. */
async function controlId(p: Page, text: string): Promise<string> {
  const id = await untilFound(
    p,
    (t: string) => [...document.querySelectorAll('label')].find((l) => l.textContent === t)?.htmlFor || false,
    text,
  )
  return (await id.jsonValue()) as string
}

/** Replaces the text of the form control whose <label> reads `text`. */
export async function fillByLabel(p: Page, text: string, value: string): Promise<void> {
  const input = await p.waitForSelector(`#${await controlId(p, text)}`)
  await input!.click({ count: 3 })
  await p.keyboard.press('Backspace')
  await input!.type(value)
}

/** Picks `value` in the <select> labelled `text`. */
export async function selectByLabel(p: Page, text: string, value: string): Promise<void> {
  const id = await controlId(p, text)
  // a person picks an option they can see: options filled by a later load are waited for (picking
  // one that is not there yet would silently pick nothing)
  await untilFound(
    p,
    (sel: string, v: string) => [...document.querySelectorAll(`${sel} option`)].some((o) => o.value === v),
    `#${id}`,
    value,
  )
  const picked = await p.select(`#${id}`, value)
  if (!picked.includes(value)) throw new Error(`${text}: option ${value} could not be picked`)
}

/** Ticks or clears the checkbox labelled `text`. */
export async function checkByLabel(p: Page, text: string, checked: boolean): Promise<void> {
  const box = await p.waitForSelector(`#${await controlId(p, text)}`)
  if ((await box!.evaluate((el) => (el as unknown as { checked: boolean }).checked)) !== checked) await box!.click()
}

/** Clicks the button whose accessible name (aria-label, else its text) is `name`. */
export async function clickButton(p: Page, name: string): Promise<void> {
  const button = await untilFound(
    p,
    (n: string) =>
      [...document.querySelectorAll('button')].find((b) => (b.getAttribute('aria-label') ?? b.textContent?.trim()) === n) ?? false,
    name,
  )
  await press(button)
}

/** The `Review changes` dialog while it is open (docs/ui.md#review-before-protected-changes). */
export const REVIEW_DIALOG = 'dialog[open][aria-modal="true"]'

/**
 * Waits for the `Review changes` dialog a write opened and answers its text, with its two ways out:
 * `request()` presses Request approval and waits for the link to the request made (its address);
 * `applyNow()` ticks Apply now without review (only a `flag:bypass` holder has it), presses the same
 * button and waits for the dialog to close. The steps every review test repeated, in one place.
 */
export async function openedReview(p: Page): Promise<{ text: string; request(): Promise<string>; applyNow(): Promise<void> }> {
  const text = await (await p.waitForSelector(REVIEW_DIALOG))!.evaluate((d) => d.textContent ?? '')
  const submit = async () => {
    // the button is disabled while the dialog loads what it needs: pressed only once it is enabled
    await untilFound(
      p,
      (s: string) =>
        [...document.querySelectorAll(`${s} button`)].some(
          (b) => b.textContent?.trim() === 'Request approval' && b.getAttribute('disabled') === null,
        ),
      REVIEW_DIALOG,
    )
    await clickButton(p, 'Request approval')
  }
  return {
    text,
    async request() {
      await submit()
      const made = await p.waitForSelector(`${REVIEW_DIALOG} .review-made a`)
      return (await made!.evaluate((a) => a.getAttribute('href'))) ?? ''
    },
    async applyNow() {
      await checkByLabel(p, 'Apply now without review', true)
      await submit()
      await p.waitForFunction((s) => !document.querySelector(s), ON_CHANGE, REVIEW_DIALOG)
    },
  }
}

/**
 * Clicks the button named `name` (as `clickButton`) once it is enabled: a button inside a form the
 * page disables until its loads land (a flag page's fields wait for the person's permissions) is
 * found before it works, and a click on it then does nothing.
 */
export async function clickEnabledButton(p: Page, name: string): Promise<void> {
  const button = await untilFound(
    p,
    (n: string) =>
      [...document.querySelectorAll('button')].find(
        (b) =>
          (b.getAttribute('aria-label') ?? b.textContent?.trim()) === n &&
          !(b as unknown as { matches(s: string): boolean }).matches(':disabled'),
      ) ?? false,
    name,
  )
  await press(button)
}

/** Follows the link whose text is `name`. */
export async function clickLink(p: Page, name: string): Promise<void> {
  const link = await untilFound(
    p,
    (n: string) => [...document.querySelectorAll('a')].find((a) => a.textContent?.trim() === n) ?? false,
    name,
  )
  await press(link)
}

/** The selector of the switch that toggles flag `name`. */
export const switchOf = (name: string) => `[role="switch"][aria-label="${name}"]`

/** Waits until flag `name`'s switch shows `on`. */
export async function waitForSwitch(p: Page, name: string, on: boolean, timeout = 30_000): Promise<void> {
  await p.waitForFunction(
    (n, v) => document.querySelector(`[aria-label="${n}"]`)?.getAttribute('aria-checked') === v,
    { ...ON_CHANGE, timeout },
    name,
    String(on),
  )
}

/** Waits until flag `name`'s switch is gone from the page. */
export async function waitForNoSwitch(p: Page, name: string): Promise<void> {
  await p.waitForFunction((n) => !document.querySelector(`[aria-label="${n}"]`), ON_CHANGE, name)
}

/**
 * Waits until the page shows `text` somewhere. Checked every frame, not on DOM mutations: a text
 * node changed in place (a button's label) is a characterData change, which mutation polling misses.
 */
export async function waitForText(p: Page, text: string, timeout = 30_000): Promise<void> {
  await p.waitForFunction((t) => document.body.textContent?.includes(t) ?? false, { polling: 'raf', timeout }, text)
}

/** Waits until the address bar's path is `path`. */
export async function waitForPath(p: Page, path: string): Promise<void> {
  await p.waitForFunction((want) => location.pathname === want, {}, path)
}

/**
 * Goes to `href` (an address of the UI) in tab `p` the way a click on one of the UI's own links
 * does, without a page load: a new history entry, then the router re-renders (it listens for
 * `popstate` as for its own links, src/ui/app/router.ts). Resolves once the router has rendered the
 * new page; what that page loads, the caller waits for as after a click. A whole load (`goto`) is
 * made only where no link could go: a tab not yet showing the signed-in UI of that origin, another
 * origin, an address with a fragment (read as the page loads), or the address the tab already shows
 * (a reload). A load costs Chromium about 0.3 CPU-s more than
 * a visit in the app (docs/performance.md#2026-12-07-ninth-session-the-browser-files-cpu). What a
 * load renews and a visit keeps: the signed-in person's permissions and the environments, read once
 * per load; a test that changes those through the API loads the page. As after a link, one flag's
 * page reached from another's keeps what the page held (an editor left open, say).
 */
export async function visit(p: Page, href: string): Promise<void> {
  const to = new URL(href)
  const inApp = await p.evaluate(
    (origin, path, search) =>
      location.origin === origin &&
      location.pathname.startsWith('/ui/') &&
      `${location.pathname}${location.search}` !== `${path}${search}` &&
      document.querySelector('header nav') !== null,
    to.origin,
    to.pathname,
    to.search,
  )
  if (!inApp || !to.pathname.startsWith('/ui/') || to.hash) {
    await p.goto(href)
    return
  }
  await p.evaluate(async (address) => {
    const w = globalThis as unknown as {
      history: { pushState(state: unknown, unused: string, url: string): void }
      dispatchEvent(e: unknown): void
      PopStateEvent: new (type: string) => unknown
    }
    w.history.pushState(null, '', address)
    w.dispatchEvent(new w.PopStateEvent('popstate'))
    // preact renders a state change in a microtask: after the next task, the new page is in the document
    await new Promise((resolve) => setTimeout(resolve, 0))
  }, `${to.pathname}${to.search}${to.hash}`)
}

/** All the text the page shows. */
export const bodyText = (p: Page) => p.$eval('body', (b) => b.textContent ?? '')

/** How wide the page is laid out (wider than the viewport means sideways scrolling). */
export const layoutWidth = (p: Page) => p.evaluate(() => document.documentElement.scrollWidth)

/** The cookies the page can see (the UI sets none). */
export const pageCookies = (p: Page) => p.evaluate(() => document.cookie)

/** Opens a new tab at the UI and signs in as `username` with the labelled form. */
export async function signInAs(
  browser: Browser,
  url: string,
  username: string,
  password: string,
  viewport = { width: 1280, height: 800 },
): Promise<Page> {
  const p = await browser.newPage()
  await p.setViewport(viewport)
  await p.goto(`${url}/ui/`)
  await fillByLabel(p, 'Username', username)
  await fillByLabel(p, 'Password', password)
  await clickButton(p, 'Sign in')
  await p.waitForSelector('header nav')
  return p
}

/**
 * Opens a new tab at the UI already signed in with the session `token` (one `POST /api/login` gave),
 * as the sign-in form leaves it: the token in the tab's session storage (docs/ui.md). For tests whose
 * subject is not the form; a page load cheaper than `signInAs`. `path` (below /ui/) is the page the
 * tab opens at: the page a test is about, loaded once, not the Flags page first.
 */
export async function openSignedIn(
  browser: Browser,
  url: string,
  token: string,
  viewport = { width: 1280, height: 800 },
  path = '',
): Promise<Page> {
  const p = await browser.newPage()
  await p.setViewport(viewport)
  // only the first document of the tab: a reload after signing out must find no token
  const seed = await p.evaluateOnNewDocument((t) => sessionStorage.setItem('flagd.token', t), token)
  await p.goto(`${url}/ui/${path}`)
  await p.removeScriptToEvaluateOnNewDocument(seed.identifier)
  await p.waitForSelector('header nav')
  return p
}

/** Signs `username` in through the API as the UI does (audited as source "ui") and answers the session token. */
export async function sessionOf(url: string, username: string, password: string): Promise<string> {
  const login = await fetch(`${url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-flagd-client': 'ui' },
    body: JSON.stringify({ username, password }),
  })
  if (login.status !== 200) throw new Error(`${username} could not sign in: ${login.status} ${await login.text()}`)
  return ((await login.json()) as { token: string }).token
}

/** Lets the browser save downloads into `dir`; `next()` waits for the next one to complete and names it. */
export async function allowDownloads(browser: Browser, dir: string): Promise<{ next(): Promise<string> }> {
  const cdp = await browser.target().createCDPSession()
  // a browser context of the shared Chromium (ui-fixture.ts) has its own download setting
  const browserContextId = browser.defaultBrowserContext().id
  await cdp.send('Browser.setDownloadBehavior', { behavior: 'allow', downloadPath: dir, eventsEnabled: true, browserContextId })
  const names = new Map<string, string>()
  cdp.on('Browser.downloadWillBegin', (e) => names.set(e.guid, e.suggestedFilename))
  return {
    /** The file name of the next download, once the browser says it is complete (an event, not a poll). */
    next: () =>
      new Promise<string>((resolve, reject) => {
        const seen = (e: { guid: string; state: string }) => {
          if (e.state === 'inProgress') return
          cdp.off('Browser.downloadProgress', seen)
          if (e.state === 'completed') resolve(names.get(e.guid) ?? '')
          else reject(new Error(`download ${e.state}`))
        }
        cdp.on('Browser.downloadProgress', seen)
      }),
  }
}

const AXE = readFileSync(Bun.resolveSync('axe-core/axe.min.js', import.meta.dir), 'utf8')
declare const axe: { run(context: unknown, options: unknown): Promise<AxeResults> }

/**
 * Every accessibility problem axe-core finds on the page as it is now, of any impact (minor and
 * moderate too): docs/ui.md#everywhere holds the UI to none at all. `within` (a selector) limits it
 * to one part of the page.
 */
export async function allViolations(p: Page, within?: string): Promise<string[]> {
  if (!(await p.evaluate(() => typeof (globalThis as { axe?: unknown }).axe === 'object'))) await p.evaluate(AXE)
  return p.evaluate(async (selector) => {
    // `within`: one part of the page only (an open dialog, say)
    const context = selector ? document.querySelector(selector) : document
    const result = await axe.run(context, { resultTypes: ['violations'] })
    return result.violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)
  }, within)
}

/** What the page's clipboard holds (the browser context must have been granted clipboard-read). */
export const clipboardText = (p: Page) => p.evaluate(() => navigator.clipboard.readText())

/**
 * Saves a screenshot of `p` into `path`. Headless Chromium paints only the tab in front, so the tab
 * is brought there first, and a tab that cannot paint within 5 s is skipped rather than waited on.
 */
export async function screenshotTo(p: Page, path: string): Promise<void> {
  if (process.env.TEST_KEEP_SCREENSHOTS !== '1') return // releaseScratch removes them unkept: none is taken
  await Promise.race([p.bringToFront().then(() => p.screenshot({ path })), Bun.sleep(5000)]).catch(() => {})
}

/**
 * The end of a browser test file's scratch directory (screenshots of every test's last screen, files
 * it uploaded or downloaded): kept and its path printed with TEST_KEEP_SCREENSHOTS=1, to look at a
 * failure; otherwise removed, so runs do not pile up in the temp directory.
 */
export function releaseScratch(dir: string): void {
  if (process.env.TEST_KEEP_SCREENSHOTS === '1') console.log(`web UI screenshots: ${dir}`)
  else rmSync(dir, { recursive: true, force: true })
}
