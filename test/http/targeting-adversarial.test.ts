/**
 * docs/targeting.md#rules–19.2 under attack: no rule and no context, however built, keeps the service from
 * answering others. Rules that double lists or texts, search a long context list for every item of
 * another, or compare 300-character versions, evaluated by 16 clients at once with the largest
 * contexts allowed, while /health is timed.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { healthWhile, type ServedApp, serveApp } from '../helpers/served-app.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
let served: ServedApp
beforeAll(async () => {
  t = await createTestApp()
  served = serveApp(t)
  const rules: Record<string, unknown> = {
    'evil/double-list': { reduce: [{ var: 'list' }, { merge: [{ var: 'accumulator' }, { var: 'accumulator' }] }, [1]] },
    'evil/double-text': { reduce: [{ var: 'list' }, { cat: [{ var: 'accumulator' }, { var: 'accumulator' }] }, 'ab'] },
    // every item of the context's list looked for (and never found) in a list of 10,000 held by the rule
    'evil/quadratic': { some: [{ var: 'list' }, { in: [{ '-': [-1, { var: '' }] }, Array.from({ length: 10_000 }, (_, i) => i % 1000)] }] },
    'evil/versions': { sem_ver: [{ var: 'version' }, '>=', '1.0.0'] },
  }
  for (const [name, rule] of Object.entries(rules)) {
    const res = await t.req('POST', '/api/flags', {
      token: t.adminToken,
      body: { name, type: 'BOOLEAN', targeting: { if: [rule, 'true', 'false'] } },
    })
    expect(res.status).toBe(201)
  }
})
afterAll(async () => {
  await served?.stop()
  await t?.close()
})

test('16 clients evaluating costly rules with the largest contexts: each is bounded, /health answers throughout', async () => {
  // about 60 KiB of context: the most a client may send
  const list = Array.from({ length: 12_000 }, (_, i) => i % 1000)
  const context = { targetingKey: 'attacker', list, version: `1.${'9'.repeat(300)}.0` }
  const flags = ['evil/double-list', 'evil/double-text', 'evil/quadratic', 'evil/versions']
  const requests = Array.from({ length: 16 }, (_, i) =>
    fetch(`${served.base}/ofrep/v1/evaluate/flags/${flags[i % 4]}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ context }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> })),
  )
  const { answers } = await healthWhile(served.base, requests) // /health answers 200 throughout
  for (const [i, a] of answers.entries()) {
    if (flags[i % 4] === 'evil/versions')
      expect(a.body).toMatchObject({ value: false, reason: 'TARGETING_MATCH' }) // sem_ver null: the else branch
    else expect(a).toMatchObject({ status: 400, body: { errorCode: 'GENERAL', errorDetails: expect.stringContaining('steps of work') } })
  }
  // and the bulk list carries them as error items, not a failed request
  const bulk = await fetch(`${served.base}/ofrep/v1/evaluate/flags`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ context }),
  })
  expect(bulk.status).toBe(200)
  const items = ((await bulk.json()) as { flags: { key: string; errorCode?: string }[] }).flags
  expect(items.filter((f) => f.errorCode === 'GENERAL').map((f) => f.key)).toEqual([
    'evil/double-list',
    'evil/double-text',
    'evil/quadratic',
  ])
}, 60_000)

test('a context over 64 KiB is refused before any rule runs', async () => {
  const over = { targetingKey: 'x', pad: 'x'.repeat(64 * 1024) }
  const res = await t.req('POST', '/ofrep/v1/evaluate/flags/evil/quadratic', { token: t.adminToken, body: { context: over } })
  expect(res.body).toMatchObject({ errorCode: 'INVALID_CONTEXT' })
})
