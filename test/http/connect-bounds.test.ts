/**
 * docs/api.md#conventions on the Connect routes of the evaluation service: a JSON message nested
 * past the limit is refused before it is parsed, as every other body is.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
let token: string
beforeAll(async () => {
  // the Connect routes exist while the evaluation port is on
  t = await createTestApp({ FLAGD_EVALUATION_PORT: '0' })
  await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'c/on', type: 'BOOLEAN', value: true } })
  token = (await t.req('POST', '/api/tokens', { token: t.adminToken, body: { name: 'app', permissions: ['flag:evaluate'] } })).body.token
})
afterAll(() => t.close())

const connect = (body: string) =>
  t.req('POST', '/flagd.evaluation.v1.Service/ResolveBoolean', {
    token,
    rawBody: body,
    headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
  })

test('a Connect JSON message nested deeper than the limit is invalid_argument, not parsed', async () => {
  const res = await connect(`{"flagKey":"c/on","context":${'['.repeat(100_000)}`)
  expect(res.status).toBe(400)
  expect(res.text).toContain('nested deeper than 32 levels')
  expect((await connect('{"flagKey":"c/on","context":{}}')).body).toMatchObject({ value: true })
})
