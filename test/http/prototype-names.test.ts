/**
 * Names from outside that are also the names of every object's built-in properties (`__proto__`,
 * `constructor`, `toString`, `hasOwnProperty`, `valueOf`): wherever flagd looks such a name up it
 * must find only what was stored under it, never an object's built-in (docs/api.md#conventions).
 * One table per kind of place: rule operators, per-environment states, usage per variant.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

const BUILT_IN = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']
let a: TestApp
beforeAll(async () => {
  a = await createTestApp()
})
afterAll(async () => a.close())

test('a rule whose operator is named like a built-in property is refused as an unknown operator', async () => {
  for (const [i, op] of ['toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', 'propertyIsEnumerable'].entries()) {
    const made = await a.req('POST', '/api/flags', {
      token: a.adminToken,
      body: { name: `rules/op${i}`, type: 'BOOLEAN', value: true, variants: { on: true, off: false }, targeting: { [op]: ['on'] } },
    })
    expect(made.status, op).toBe(400)
    expect(made.body.error.message, op).toContain(`unknown operator "${op}"`)
  }
  expect((await a.req('GET', '/api/flags?prefix=rules/', { token: a.adminToken })).body).toEqual([])
})

test('environments named like built-in properties each keep their own state of a flag', async () => {
  for (const env of BUILT_IN)
    expect((await a.req('PUT', `/api/environments/${env}`, { token: a.adminToken, body: {} })).status, env).toBe(201)
  // made after the environments: every one of them gets its own state
  const made = await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'envs/switch', type: 'INTEGER', value: 1 } })
  expect(made.status).toBe(201)
  for (const [i, env] of BUILT_IN.entries()) {
    const put = await a.req('PUT', `/api/flags/envs/switch?environment=${env}`, { token: a.adminToken, body: { value: 10 + i } })
    expect(put.status, `${env}: ${put.text}`).toBe(200)
  }
  for (const [i, env] of BUILT_IN.entries()) {
    const read = await a.req('GET', `/api/flags/envs/switch?environment=${env}`, { token: a.adminToken })
    expect(read.body.value, env).toBe(10 + i)
  }
  expect((await a.req('GET', '/api/flags/envs/switch', { token: a.adminToken })).body.value).toBe(1)
  const side = (await a.req('GET', '/api/flags/envs/switch/environments', { token: a.adminToken })).body
  for (const [i, env] of BUILT_IN.entries()) expect(Object.hasOwn(side, env) && side[env].value, env).toBe(10 + i)
  const stored = [...a.app.store.committed().flags.values()].find((f) => f.name === 'envs/switch')
  // every environment's state stored alike, the default one's too
  expect(Object.keys(stored?.states ?? {}).sort()).toEqual([...BUILT_IN, 'development'].sort())
})

test('usage per variant counts variants named like built-in properties as numbers', async () => {
  const variants = { toString: 1, valueOf: 2, hasOwnProperty: 3 }
  const made = await a.req('POST', '/api/flags', {
    token: a.adminToken,
    body: { name: 'usage/picked', type: 'INTEGER', value: 1, variants, targeting: { var: 'pick' } },
  })
  expect(made.status, made.text).toBe(201)
  for (const pick of Object.keys(variants))
    for (let n = 0; n < 2; n++) {
      const answer = await a.req('POST', '/ofrep/v1/evaluate/flags/usage/picked', { token: a.adminToken, body: { context: { pick } } })
      expect(answer.body.variant).toBe(pick)
    }
  const usage = await a.req('GET', '/api/flags/usage/picked/usage', { token: a.adminToken })
  expect(usage.body.variants).toEqual({ toString: 2, valueOf: 2, hasOwnProperty: 2 })
})
