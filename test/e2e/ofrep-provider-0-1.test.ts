/**
 * Why a DISABLED flag, or one with no default, reads as an error through the OFREP server provider
 * npm serves (`@openfeature/ofrep-provider` 0.1.3, on `ofrep-core` 0.1), and what works instead
 * (docs/openfeature.md#server-provider). The proof is by cases: every shape of a `200` answer such a
 * flag could be given is tried against 0.1.3 from a stand-in server, and none gives the application
 * its own default without an error. flagd's own answers then go to 0.1.3 (an error, the app's
 * default) and to a provider on `ofrep-core` 2.x (the app's default, reason DISABLED / DEFAULT).
 */

import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test'
import { OFREPProvider } from '@openfeature/ofrep-provider'
import { OpenFeature } from '@openfeature/server-sdk'
import { OfrepServerProvider } from '../helpers/ofrep-server-provider.ts'
import { type ServedApp, serveApp } from '../helpers/served-app.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let answer: unknown = {}
const stand = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => Response.json(answer) })
let t: TestApp
let served: ServedApp
beforeAll(async () => {
  t = await createTestApp()
  served = serveApp(t)
  for (const body of [
    { name: 'off/flag', type: 'BOOLEAN', value: false, enabled: false },
    { name: 'none/flag', type: 'STRING', defaultValue: null },
  ])
    expect((await t.req('POST', '/api/flags', { token: t.adminToken, body })).status).toBe(201)
})
afterEach(async () => {
  await OpenFeature.close()
})
afterAll(async () => {
  stand.stop(true)
  await served?.stop()
  await t?.close()
})

test('0.1.3: no 200 answer gives the application its own default without an error', async () => {
  await OpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl: `http://127.0.0.1:${stand.port}` }))
  const client = OpenFeature.getClient()
  const metadata = { type: 'BOOLEAN', revision: 1 }
  const cases: [string, unknown][] = [
    ['no value (the OFREP answer for DISABLED)', { key: 'f', reason: 'DISABLED', metadata }],
    ['value null', { key: 'f', value: null, reason: 'DISABLED', metadata }],
    ['a value of another type', { key: 'f', value: 'default', reason: 'DISABLED', metadata }],
    ['a value of the same type', { key: 'f', value: false, reason: 'DISABLED', metadata }],
  ]
  for (const [what, body] of cases) {
    answer = body
    // the application's default is true: only "the same type" avoids an error, and then the app gets
    // the server's false instead of its own true; the server cannot know the app's default
    const details = await client.getBooleanDetails('f', true)
    const appDefaultWithoutError = details.value === true && details.reason !== 'ERROR'
    expect([what, appDefaultWithoutError]).toEqual([what, false])
  }
})

test("flagd's answers: 0.1.3 reports ERROR with the app's default; a provider on ofrep-core 2.x reads DISABLED and DEFAULT", async () => {
  const headers: [string, string][] = [['Authorization', `Bearer ${t.adminToken}`]]
  await OpenFeature.setProviderAndWait('old', new OFREPProvider({ baseUrl: served.base, headers }))
  await OpenFeature.setProviderAndWait('new', new OfrepServerProvider({ baseUrl: served.base, headers }))
  const old = OpenFeature.getClient('old')
  const current = OpenFeature.getClient('new')
  expect(await old.getBooleanDetails('off/flag', true)).toMatchObject({ value: true, reason: 'ERROR' })
  expect(await old.getStringDetails('none/flag', 'mine')).toMatchObject({ value: 'mine', reason: 'ERROR' })
  const off = await current.getBooleanDetails('off/flag', true)
  expect(off).toMatchObject({ value: true, reason: 'DISABLED' })
  expect(off.errorCode).toBeUndefined()
  const none = await current.getStringDetails('none/flag', 'mine')
  expect(none).toMatchObject({ value: 'mine', reason: 'DEFAULT' })
  expect(none.errorCode).toBeUndefined()
})
