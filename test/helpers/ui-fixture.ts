/**
 * What every web-UI test file starts with: a daemon in a temp directory with an admin, that admin's
 * session token, an API caller, and Chromium (Debian's, through puppeteer-core, never downloaded).
 */

import { rmSync } from 'node:fs'
import puppeteer, { type Browser } from 'puppeteer-core'
import { type Daemon, startDaemon } from './daemon.ts'
import { tempDir } from './test-app.ts'

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
  const cwd = tempDir()
  const d = await startDaemon(cwd, [], { FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: 'admin-password' })
  const login = await fetch(`${d.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'admin-password' }),
  })
  const admin = ((await login.json()) as { token: string }).token
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  })
  return {
    d,
    browser,
    admin,
    api: (method, path, body, token = admin) =>
      fetch(`${d.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    async close() {
      await browser.close()
      d.proc.kill('SIGTERM')
      await d.proc.exited
      rmSync(cwd, { recursive: true, force: true })
    },
  }
}
