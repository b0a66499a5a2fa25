/**
 * docs/api.md#conventions: JSON nested deeper than 32 levels is refused while it is read, before a
 * value is built, on every route and import path that parses JSON from outside.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Server } from 'bun'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

/** An unclosed run of `[`: not a value any parser could finish, and ruinous for one that tries. */
const bomb = (bytes: number) => '['.repeat(bytes)
const json = { 'content-type': 'application/json' }

let t: TestApp
let remote: Server<undefined>
beforeAll(async () => {
  remote = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => new Response(`{"environment":"x","flags":{},"pad":${bomb(1024 * 1024)}`, { headers: json }),
  })
  t = await createTestApp({ FLAGD_IMPORT_ALLOWED_HOSTS: '127.0.0.1' })
})
afterAll(async () => {
  remote.stop(true)
  await t.close()
})

test('an upload that is a nesting bomb is 400 naming the depth, and nothing changes', async () => {
  const res = await t.req('PUT', '/api/migrations', { token: t.adminToken, rawBody: bomb(4 * 1024 * 1024), headers: json })
  expect(res.status).toBe(400)
  expect(res.body.error.message).toBe('request body is nested deeper than 32 levels')
  expect(res.body.error.details).toEqual({ field: 'body', reason: 'nested deeper than 32 levels' })
  expect((await t.req('GET', '/api/flags', { token: t.adminToken })).body).toEqual([])
})

test('a body over the route limit is 413 whatever it holds', async () => {
  const res = await t.req('POST', '/api/flags', { token: t.adminToken, rawBody: bomb(1024 * 1024 + 1), headers: json })
  expect(res.status).toBe(413)
})

test('an OFREP body that is a nesting bomb is PARSE_ERROR naming the depth', async () => {
  for (const path of ['/ofrep/v1/evaluate/flags', '/ofrep/v1/evaluate/flags/any']) {
    const res = await t.req('POST', path, { token: t.adminToken, rawBody: `{"context":{},"x":${bomb(1024 * 1024 - 20)}`, headers: json })
    expect(res.status).toBe(400)
    expect(res.body.errorCode).toBe('PARSE_ERROR')
    expect(res.body.errorDetails).toBe('the body is nested deeper than 32 levels')
  }
})

test('an OTLP JSON body that is a nesting bomb is 400 naming the depth', async () => {
  const res = await t.req('POST', '/v1/metrics', { token: t.adminToken, rawBody: bomb(1024 * 1024), headers: json })
  expect(res.status).toBe(400)
  expect(res.body.error.message).toContain('nested deeper than 32 levels')
})

test('a remote document that is a nesting bomb is 400 on url naming the depth, and nothing changes', async () => {
  const res = await t.req('PATCH', '/api/migrations', { token: t.adminToken, body: { url: `http://127.0.0.1:${remote.port}/doc.json` } })
  expect(res.status).toBe(400)
  expect(res.body.error.message).toBe('the document at url is nested deeper than 32 levels')
  expect(res.body.error.details).toEqual({ field: 'url', reason: 'nested deeper than 32 levels' })
  expect((await t.req('GET', '/api/flags', { token: t.adminToken })).body).toEqual([])
})
