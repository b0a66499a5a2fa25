/**
 * What every web-UI test file starts with: a daemon in a temp directory with an admin, that admin's
 * session token, an API caller, and Chromium (Debian's, through puppeteer-core, never downloaded).
 */

import { afterAll, afterEach, beforeAll } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import puppeteer, { type Browser, type Page } from 'puppeteer-core'
import type { Daemon } from './daemon.ts'
import { startAdminDaemon } from './test-daemon.ts'
import { findChromium, releaseScratch, screenshotTo, signInAs } from './ui-driver.ts'

export interface UiFixture {
  d: Daemon
  browser: Browser
  /** The admin's session token. */
  admin: string
  /** Calls the API as the admin (or with `token`). */
  api(method: string, path: string, body?: unknown, token?: string): Promise<Response>
  /** Closes the browser, stops the daemon, removes its directory. */
  close(): Promise<void>
}

/** Starts the daemon and the browser at `chromium`. */
export async function startUiFixture(chromium: string): Promise<UiFixture> {
  const d = await startAdminDaemon()
  const browser = await puppeteer
    .launch({ executablePath: chromium, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] })
    .catch(async (err) => {
      await d.stop()
      throw err
    })
  return {
    d,
    browser,
    admin: d.admin,
    api: d.api,
    async close() {
      await browser.close()
      await d.stop()
    },
  }
}

/** A browser test file's setting: the daemon and Chromium once per file, tabs closed after each test. */
export interface BrowserSuite {
  /** Debian's Chromium, or null (the file's tests are skipped). */
  readonly chromium: string | null
  /** The fixture, once `beforeAll` has run. */
  readonly ui: UiFixture
  /** Where the file keeps screenshots of each test's last screen and the files it moves. */
  readonly scratch: string
  /** A tab signed in as `username`, closed (after a screenshot) when the test ends. */
  open(username?: string, password?: string, viewport?: { width: number; height: number }): Promise<Page>
  /** Closes `page` with the test's other tabs. */
  track(page: Page): Page
}

/**
 * Registers the hooks every browser test file needs: start the daemon and Chromium (then `seed`),
 * screenshot and close the test's tabs after each test even when it failed, stop everything and
 * release the scratch directory at the end.
 */
export function browserSuite(name: string, seed: (ui: UiFixture) => Promise<void> = async () => {}): BrowserSuite {
  const chromium = findChromium()
  const scratch = mkdtempSync(join(tmpdir(), `flagd-${name}-`))
  const pages: Page[] = []
  let fixture: UiFixture | undefined
  beforeAll(async () => {
    if (!chromium) return
    fixture = await startUiFixture(chromium)
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
    async open(username = 'admin', password = 'admin-password', viewport) {
      const p = await signInAs((fixture as UiFixture).browser, (fixture as UiFixture).d.url, username, password, viewport)
      pages.push(p)
      return p
    },
  }
}
