/**
 * Pattern checks never stall the service (docs/api.md#flags): a pattern whose program is too large is
 * refused, and every request, document or file checks within a budget. /health is asked while each
 * scenario runs; how long each takes is measured in bench/ (docs/development.md#time).
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { healthWhile, serveApp } from '../helpers/served-app.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

const EVIL = `(?i)${'[a-z]{0,100}'.repeat(80)}X` // 965 characters, legal RE2, 16,003 instructions
const LONG = 'a'.repeat(65_536)
const doc = (flags: Record<string, unknown>) => ({ environment: 'e', version: '1.0.0', createdAt: new Date().toISOString(), flags })

/** Runs `request` and asks /health meanwhile (it must answer); returns the request's answer. */
async function withHealth(request: () => Promise<{ status: number; body: any }>) {
  const pending = request()
  expect((await t.req('GET', '/health')).status).toBe(200)
  return { res: await pending }
}

test('the 965-character pattern from the attack is refused as too large, at once', async () => {
  const { res } = await withHealth(() =>
    t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'evil/a', type: 'STRING', regexPattern: EVIL, defaultValue: 'X' } }),
  )
  expect(res.status).toBe(400)
  expect(res.body.error.details.field).toBe('regexPattern')
  expect(res.body.error.details.reason).toContain('too large to check quickly')
})

test('the costliest check the budget allows answers, and /health with it', async () => {
  // 243 instructions x 65,537 positions: just under the budget; about 0.4 s of matching here
  const { res } = await withHealth(() =>
    t.req('POST', '/api/flags', {
      token: t.adminToken,
      body: { name: 'evil/b', type: 'STRING', regexPattern: '(?i)[a-z]{0,120}X', defaultValue: 'X', value: LONG },
    }),
  )
  expect(res.status).toBe(400)
  expect(res.body.error.details.reason).toContain('does not match regexPattern')
})

test('a check over the budget is refused without being run', async () => {
  const { res } = await withHealth(() =>
    t.req('POST', '/api/flags', {
      token: t.adminToken,
      body: { name: 'evil/c', type: 'STRING', regexPattern: '(?i)[a-z]{0,100}[a-z]{0,100}X', defaultValue: 'X', value: LONG },
    }),
  )
  expect(res.status).toBe(400)
  expect(res.body.error.details.reason).toContain('cannot be checked against regexPattern quickly enough')
})

test('a dry-run import with four attack flags is refused at once and changes nothing', async () => {
  const flags: Record<string, unknown> = {}
  for (let i = 0; i < 4; i++) flags[`evil/f${i}`] = { type: 'STRING', regexPattern: `${EVIL}${i}`, defaultValue: LONG }
  const { res } = await withHealth(() => t.req('PUT', '/api/migrations?dryRun=true', { token: t.adminToken, body: doc(flags) }))
  expect(res.status).toBe(400)
})

test('a document of 300 distinct costly patterns runs out of budget instead of stalling', async () => {
  const flags: Record<string, unknown> = {}
  for (let i = 0; i < 300; i++)
    flags[`costly/f${i}`] = {
      type: 'STRING',
      regexPattern: `[a-z]{0,90}${'b'.repeat(i % 50)}Y${i}`,
      defaultValue: `${'a'.repeat(20_000)}Y${i}`,
    }
  const { res } = await withHealth(() => t.req('PUT', '/api/migrations', { token: t.adminToken, body: doc(flags) }))
  expect(res.status).toBe(400)
  expect(JSON.stringify(res.body.error.details.errors)).toContain('quickly')
  expect((await t.req('GET', '/api/flags?prefix=costly/', { token: t.adminToken })).body).toEqual([])
})

test('ordinary patterns on long values still work', async () => {
  const res = await t.req('POST', '/api/flags', {
    token: t.adminToken,
    body: { name: 'ok/long', type: 'STRING', regexPattern: '^a+$', defaultValue: LONG },
  })
  expect(res.status).toBe(201)
  const uuid = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
  expect(
    (
      await t.req('POST', '/api/flags', {
        token: t.adminToken,
        body: { name: 'ok/uuid', type: 'STRING', regexPattern: uuid, defaultValue: '123e4567-e89b-12d3-a456-426614174000' },
      })
    ).status,
  ).toBe(201)
})

test('checks from concurrent requests do not add up: /health answers between the checks while 8 costly PUTs run', async () => {
  const served = serveApp(t)
  try {
    // a confined writer, as in the attack; one flag per request so that none waits on If-Match
    const writer = (
      await t.req('POST', '/api/tokens', {
        token: t.adminToken,
        body: { name: 'pattern writer', permissions: ['flag:write', 'flag:read'], flagPrefixes: ['conc/'] },
      })
    ).body.token as string
    // 8 checks of about 0.25 s: together twice the second /health must answer within
    for (let i = 0; i < 8; i++)
      await t.req('POST', '/api/flags', {
        token: t.adminToken,
        body: { name: `conc/f${i}`, type: 'STRING', regexPattern: '(?i)[a-z]{0,120}X', defaultValue: 'X' },
      })
    const value = 'a'.repeat(64 * 1024)
    const puts = Array.from({ length: 8 }, (_, i) =>
      fetch(`${served.base}/api/flags/conc/f${i}`, {
        method: 'PUT',
        headers: { 'x-api-key': writer, 'content-type': 'application/json' },
        body: JSON.stringify({ value }),
      }),
    )
    const { answers, healthAnswers } = await healthWhile(served.base, puts)
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(400)) // each value fails its pattern
    // one check after another would hold /health until all eight were done; taking turns, it is
    // answered between them
    expect(healthAnswers).toBeGreaterThan(1)
  } finally {
    await served.stop()
  }
}, 60_000) // eight checks of up to 0.4 s each, one after another, on a busy CI machine

test('imports take turns with flag writes too: /health answers between the checks while 8 costly imports run', async () => {
  const served = serveApp(t)
  try {
    const costly = (i: number) =>
      doc({ [`conc-import/f${i}`]: { type: 'STRING', regexPattern: '(?i)[a-z]{0,120}X', defaultValue: 'a'.repeat(64 * 1024) } })
    const imports = Array.from({ length: 8 }, (_, i) =>
      fetch(`${served.base}/api/migrations?dryRun=true`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(costly(i)),
      }),
    )
    const { answers, healthAnswers } = await healthWhile(served.base, imports)
    expect(answers.map((r) => r.status)).toEqual(Array(8).fill(400)) // each default fails its pattern
    // one check after another would hold /health until all eight were done; taking turns, it is
    // answered between them
    expect(healthAnswers).toBeGreaterThan(1)
  } finally {
    await served.stop()
  }
}, 60_000)
