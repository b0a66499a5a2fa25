/**
 * What every web-UI test file starts with: a daemon in a temp directory with an admin, that admin's
 * session token, an API caller, and Chromium (Debian's, through puppeteer-core, never downloaded).
 */

import { afterAll, afterEach, beforeAll } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'puppeteer-core'
import type { Daemon } from './daemon.ts'
import { isolatedBrowser } from './shared-chromium.ts'
import { type DaemonEnv, startAdminDaemon } from './test-daemon.ts'
import { findChromium, openSignedIn, releaseScratch, screenshotTo, sessionOf } from './ui-driver.ts'

export interface UiFixture {
  d: Daemon
  /** A browser context of the process's one Chromium, as a browser of its own (shared-chromium.ts). */
  browser: Browser
  /** The admin's session token. */
  admin: string
  /** Calls the API as the admin (or with `token`). */
  api(method: string, path: string, body?: unknown, token?: string): Promise<Response>
  /** Closes the browser (context), stops the daemon, removes its directory. */
  close(): Promise<void>
}

/** Starts the daemon (with `env`) and a browser context of the process's Chromium at `chromium`, side by side. */
export async function startUiFixture(chromium: string, env: DaemonEnv = {}): Promise<UiFixture> {
  const [d, browser] = await Promise.allSettled([startAdminDaemon(env), isolatedBrowser(chromium)])
  if (d.status === 'rejected' || browser.status === 'rejected') {
    if (d.status === 'fulfilled') await d.value.stop()
    if (browser.status === 'fulfilled') await browser.value.close()
    throw d.status === 'rejected' ? d.reason : (browser as PromiseRejectedResult).reason
  }
  const [daemon, context] = [d.value, browser.value]
  return {
    d: daemon,
    browser: context,
    admin: daemon.admin,
    api: daemon.api,
    async close() {
      await context.close()
      await daemon.stop()
    },
  }
}

/** A browser test file's setting: the daemon and a browser context once per file, tabs closed after each test. */
export interface BrowserSuite {
  /** Debian's Chromium, or null (the file's tests are skipped). */
  readonly chromium: string | null
  /** The fixture, once `beforeAll` has run. */
  readonly ui: UiFixture
  /** Where the file keeps screenshots of each test's last screen and the files it moves. */
  readonly scratch: string
  /**
   * A tab signed in as `username` (a session from the API put where the sign-in form puts it; the
   * form itself is web-ui.test.ts's subject), closed (after a screenshot) when the test ends; opened
   * at `path` (below /ui/), the Flags page unless told.
   */
  open(username?: string, password?: string, viewport?: { width: number; height: number }, path?: string): Promise<Page>
  /** Closes `page` with the test's other tabs. */
  track(page: Page): Page
}

/**
 * Registers the hooks every browser test file needs: start the daemon (with `env`, which may prepare
 * its directory) and a context of the shared Chromium (then `seed`),
 * screenshot and close the test's tabs after each test even when it failed, stop everything and
 * release the scratch directory at the end.
 */
export function browserSuite(name: string, seed: (ui: UiFixture) => Promise<void> = async () => {}, env: DaemonEnv = {}): BrowserSuite {
  const chromium = findChromium()
  const scratch = mkdtempSync(join(tmpdir(), `flagd-${name}-`))
  const pages: Page[] = []
  let fixture: UiFixture | undefined
  beforeAll(async () => {
    if (!chromium) return
    fixture = await startUiFixture(chromium, env)
    await seed(fixture)
  }, 60_000)
  afterEach(async () => {
    for (const p of pages.splice(0)) {
      await screenshotTo(p, join(scratch, `${Date.now()}.png`))
      await p.close().catch(() => {})
    }
  })
  afterAll(async () => {
    releaseScratch(scratch)
    await fixture?.close()
  })
  return {
    chromium,
    scratch,
    get ui() {
      if (!fixture) throw new Error('the browser suite has not started (no Chromium?)')
      return fixture
    },
    track(page) {
      pages.push(page)
      return page
    },
    async open(username = 'admin', password = 'admin-password', viewport, path) {
      const { browser, d } = fixture as UiFixture
      const p = await openSignedIn(browser, d.url, await sessionOf(d.url, username, password), viewport, path)
      pages.push(p)
      return p
    },
  }
}
