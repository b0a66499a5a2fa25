/**
 * One Chromium per test process, shared by the browser test files it runs. `bun run test` keeps one
 * module registry per worker (`--no-isolate`), so the browser launched here by the first browser file
 * serves every later one: each file (or test) gets its own browser context, which has its own cookies,
 * storage, permissions and downloads, as a browser of its own had. Chromium is driven over a pipe
 * and ends when the pipe closes, that is when the test process ends: Bun's test runner emits no
 * `exit` event for a handler to close it. Launching Chromium was seconds of every browser file
 * (docs/performance.md#2026-12-07-fifth-session-the-browser-files).
 */

import puppeteer, { type Browser, type BrowserContext } from 'puppeteer-core'

/**
 * The arguments every test Chromium starts with: headless, no sandbox or GPU, no /dev/shm, and one
 * renderer process for all tabs. A renderer process per tab, and another whenever a tab leaves
 * about:blank for the daemon (site isolation), cost about 0.2 to 0.4 s of CPU each; the tests open
 * about a hundred tabs in a run and load the UI over two hundred times. The tests are about the
 * UI, not about Chromium's process model; every browser context keeps its own storage either way
 * (docs/performance.md#2026-12-07-ninth-session-the-browser-files-cpu).
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--process-per-site',
  '--renderer-process-limit=1',
  '--disable-site-isolation-trials',
  '--disable-features=IsolateOrigins,site-per-process',
]

let shared: Promise<Browser> | undefined

/** The process's Chromium at `executablePath`, launched on first use (again if it was closed or crashed). */
export function sharedChromium(executablePath: string): Promise<Browser> {
  if (!shared) {
    const launching = puppeteer.launch({ executablePath, headless: true, pipe: true, args: CHROMIUM_ARGS })
    shared = launching
    launching.then(
      (browser) => browser.once('disconnected', () => shared === launching && (shared = undefined)),
      () => shared === launching && (shared = undefined),
    )
  }
  return shared
}

/**
 * A browser context of the shared Chromium seen as a `Browser` of its own: its tabs, its default
 * context and its close are the context's; everything else is the shared browser's.
 */
export async function isolatedBrowser(executablePath: string): Promise<Browser> {
  const browser = await sharedChromium(executablePath)
  const context = await browser.createBrowserContext()
  return asBrowser(browser, context)
}

/**
 * `context` answering as a `Browser` (see `isolatedBrowser`); further contexts a test makes on it
 * close with it.
 */
function asBrowser(browser: Browser, context: BrowserContext): Browser {
  const more: BrowserContext[] = []
  const close = () => Promise.all([context, ...more].map((c) => c.close().catch(() => {}))).then(() => {})
  const own: Partial<Record<keyof Browser, unknown>> = {
    newPage: () => context.newPage(),
    pages: () => context.pages(),
    targets: () => context.targets(),
    defaultBrowserContext: () => context,
    browserContexts: () => [context, ...more],
    createBrowserContext: async (...args: Parameters<Browser['createBrowserContext']>) => {
      const made = await browser.createBrowserContext(...args)
      more.push(made)
      return made
    },
    close,
    disconnect: close,
  }
  return new Proxy(browser, {
    get(target, key) {
      if (Object.hasOwn(own, key)) return own[key as keyof Browser]
      const value = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}
