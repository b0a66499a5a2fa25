/**
 * Prerequisites and a caller confined by `flagPrefixes` (docs/api.md#prerequisites): flags outside
 * its scope behave as if they did not exist, so neither a refusal nor a link it makes tells it their
 * names, their existence or their variants.
 */

import { afterEach, beforeEach, expect, test } from 'bun:test'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
let confined: string

beforeEach(async () => {
  t = await createTestApp()
  const admin = (body: Record<string, unknown>) => t.req('POST', '/api/flags', { token: t.adminToken, body })
  await admin({ name: 'a/x', type: 'BOOLEAN', value: true })
  await admin({ name: 'a/seen', type: 'BOOLEAN', value: true, prerequisites: [{ flag: 'a/x', variants: ['true'] }] })
  await admin({ name: 'b/secret', type: 'STRING', value: 'x', variants: { hidden1: 'h', hidden2: 'k' } })
  await admin({ name: 'b/y', type: 'BOOLEAN', value: true, prerequisites: [{ flag: 'a/x', variants: ['true'] }] })
  const made = await t.req('POST', '/api/tokens', {
    token: t.adminToken,
    body: { name: 'confined', permissions: ['flag:read', 'flag:write'], flagPrefixes: ['a/'] },
  })
  confined = made.body.token
})
afterEach(async () => {
  await t.close()
})

const as = (method: string, path: string, body?: unknown) => t.req(method, path, { token: confined, body })

test('a 409 for a required flag names only the dependents the caller can see', async () => {
  for (const res of [
    await as('DELETE', '/api/flags/a/x'),
    await as('POST', '/api/flags/a/x/archive'),
    await as('PUT', '/api/flags/a/x', { type: 'STRING', value: 's' }),
    await as('PUT', '/api/flags/a/x', { name: 'a/x2' }),
  ]) {
    expect(res.status).toBe(409)
    expect(res.text).not.toContain('b/y')
    expect(res.body.error.details.dependents).toEqual(['a/seen'])
    expect(res.body.error.message).toContain('a/seen')
    expect(res.body.error.message).toContain('1 flag outside')
  }
  // nothing changed
  expect((await as('GET', '/api/flags/a/x')).body).toMatchObject({ type: 'BOOLEAN', revision: 1 })
})

test('a prerequisite naming a flag outside the scope is refused as one naming no flag, whether it exists or not', async () => {
  const secret = await as('POST', '/api/flags', {
    name: 'a/z',
    type: 'BOOLEAN',
    value: true,
    prerequisites: [{ flag: 'b/secret', variants: ['nope'] }],
  })
  const none = await as('POST', '/api/flags', {
    name: 'a/z',
    type: 'BOOLEAN',
    value: true,
    prerequisites: [{ flag: 'b/none', variants: ['nope'] }],
  })
  expect(secret.status).toBe(400)
  expect(secret.text).not.toContain('hidden1')
  expect(secret.text.replaceAll('b/secret', 'b/none')).toBe(none.text)
  // a link that would hold is refused too: its answers would tell what b/secret serves
  const holding = await as('POST', '/api/flags', {
    name: 'a/z',
    type: 'BOOLEAN',
    value: true,
    prerequisites: [{ flag: 'b/secret', variants: ['hidden1'] }],
  })
  expect(holding.status).toBe(400)
  expect((await as('GET', '/api/flags/a/z')).status).toBe(404)
  // nor does a near miss suggest a flag outside the scope
  const typo = await as('POST', '/api/flags', {
    name: 'a/z',
    type: 'BOOLEAN',
    value: true,
    prerequisites: [{ flag: 'b/secrt', variants: ['true'] }],
  })
  expect(typo.status).toBe(400)
  expect(typo.text).not.toContain('b/secret')
  const seen = await as('POST', '/api/flags', {
    name: 'a/z',
    type: 'BOOLEAN',
    value: true,
    prerequisites: [{ flag: 'a/xx', variants: ['true'] }],
  })
  expect(seen.body.error.message).toContain('did you mean "a/x"?')
})

test('a flag the administrator linked outside the scope is still written by the confined caller', async () => {
  const admin = await t.req('POST', '/api/flags', {
    token: t.adminToken,
    body: { name: 'a/linked', type: 'BOOLEAN', value: true, prerequisites: [{ flag: 'b/secret', variants: ['hidden1'] }] },
  })
  expect(admin.status).toBe(201)
  const res = await as('PUT', '/api/flags/a/linked', { name: 'a/linked2', description: 'renamed by the team' })
  expect(res.status).toBe(200)
  // its trace says whether the link held, not what the flag outside the scope answered
  const traced = await as('POST', '/api/flags/a/linked2/evaluate', { context: { targetingKey: 'u' } })
  expect(traced.status).toBe(200)
  expect(traced.body.trace[0]).toMatchObject({ kind: 'prerequisite', flag: 'b/secret', variants: ['hidden1'], holds: false, answered: {} })
  expect(traced.body.trace[0].answered).toEqual({})
  expect(traced.text).not.toContain('"x"')
  const seen = await t.req('POST', '/api/flags/a/linked2/evaluate', { token: t.adminToken, body: { context: { targetingKey: 'u' } } })
  expect(seen.body.trace[0].answered).toMatchObject({ value: 'x' })
})
