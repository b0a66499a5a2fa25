/**
 * GET /health (docs/api.md#endpoints): the flag count follows every change, although the answer's
 * body is kept from one request to the next while nothing changes.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { VERSION } from '../../src/version.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(async () => {
  await t?.close()
})

async function health(): Promise<{ status: string; version: string; flags: number }> {
  const res = await t.req('GET', '/health')
  expect(res.status).toBe(200)
  return res.body
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
