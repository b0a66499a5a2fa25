/**
 * The browser test files share one Chromium per test process (test/helpers/shared-chromium.ts): each
 * gets a browser context of its own, which must keep what a browser of its own kept apart (storage,
 * cookies), and closing one must leave the others working.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import type { Browser } from 'puppeteer-core'
import { isolatedBrowser } from '../helpers/shared-chromium.ts'
import { findChromium } from '../helpers/ui-driver.ts'

setDefaultTimeout(60_000)
const chromium = findChromium()
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: () => new Response('<!doctype html><title>probe</title>', { headers: { 'content-type': 'text/html' } }),
})
const opened: Browser[] = []
afterAll(async () => {
  for (const b of opened) await b.close()
  server.stop(true)
})

/** What a page of `browser` at the probe's origin finds in its storage and cookies. */
async function seen(browser: Browser): Promise<{ stored: string | null; cookie: string }> {
  const p = await browser.newPage()
  await p.goto(server.url.href)
  const found = (await p.evaluate("({ stored: localStorage.getItem('probe'), cookie: document.cookie })")) as {
    stored: string | null
    cookie: string
  }
  await p.close()
  return found
}

test.skipIf(!chromium)('two browsers of one Chromium see nothing of each other; closing one leaves the other working', async () => {
  const a = await isolatedBrowser(chromium as string)
  const b = await isolatedBrowser(chromium as string)
  opened.push(a, b)
  expect(a.process()?.pid).toBe(b.process()?.pid as number) // one Chromium
  const p = await a.newPage()
  await p.goto(server.url.href)
  await p.evaluate("localStorage.setItem('probe', 'a'); document.cookie = 'probe=a'")
  expect(await seen(a)).toEqual({ stored: 'a', cookie: 'probe=a' })
  expect(await seen(b)).toEqual({ stored: null, cookie: '' })
  const extra = await a.createBrowserContext()
  await a.close()
  expect(extra.closed).toBe(true) // a context made on a closes with it
  expect(await seen(b)).toEqual({ stored: null, cookie: '' })
})
