/**
 * GET /health (contract §10): the flag count follows every change, answered in-process and through
 * Bun's router (wired as the listener wires it), which both keep one body per state.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { VERSION } from '../../src/version.ts'
import { type ServedApp, serveApp } from '../helpers/served-app.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
let lanes: ServedApp
beforeAll(async () => {
  t = await createTestApp()
  lanes = serveApp(t)
})
afterAll(async () => {
  await lanes?.stop()
  await t?.close()
})

/** Both answers, which must agree. */
async function health() {
  const viaPipeline = (await t.req('GET', '/health')).body
  const calls = lanes.fallbackCalls()
  const viaLane = (await (await fetch(`${lanes.base}/health`)).json()) as { status: string; version: string; flags: number }
  expect(lanes.fallbackCalls()).toBe(calls) // Bun's router found the route
  expect(viaLane).toEqual(viaPipeline)
  return viaLane
}

test('the flag count follows creates and deletes, asked again and again in between', async () => {
  expect(await health()).toEqual({ status: 'ok', version: VERSION, flags: 0 })
  expect(await health()).toEqual({ status: 'ok', version: VERSION, flags: 0 })
  for (const name of ['a', 'b', 'c'])
    expect((await t.req('POST', '/api/flags', { token: t.adminToken, body: { name, type: 'BOOLEAN' } })).status).toBe(201)
  expect(await health()).toEqual({ status: 'ok', version: VERSION, flags: 3 })
  // a change that does not add or remove a flag leaves the count as it is
  expect((await t.req('PUT', '/api/flags/a', { token: t.adminToken, body: { value: true } })).status).toBe(200)
  expect((await health()).flags).toBe(3)
  expect((await t.req('DELETE', '/api/flags/b', { token: t.adminToken })).status).toBe(200)
  expect(await health()).toEqual({ status: 'ok', version: VERSION, flags: 2 })
})
