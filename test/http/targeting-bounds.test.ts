/**
 * Bounded work and memory for every rule and context (docs/targeting.md#bounds), from the attacks
 * that once got past the budget: lists that share their parts (`[acc, acc]` doubles what a reading
 * of it costs while memory barely grows), segment chains that double when compiled or written out,
 * rules that return context text, and the two inputs a cached answer once ignored: numbers JSON
 * cannot write and the time a rule reads.
 */

import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { healthWhile, type ServedApp, serveApp } from '../helpers/served-app.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

const ones = Array(30).fill(1)
const doubling = { reduce: [ones, [{ var: 'accumulator' }, { var: 'accumulator' }], 1] }

describe('rules whose values share their parts', () => {
  let t: TestApp
  let served: ServedApp
  const rules: Record<string, unknown> = {
    'shared/reduce': doubling,
    'shared/cat': { if: [{ cat: [doubling] }, 'true', 'false'] },
    'shared/in': { if: [{ in: ['x', { cat: doubling }] }, 'true', 'false'] },
    'shared/missing': { if: [{ missing: [doubling] }, 'true', 'false'] },
    'shared/sem-ver': { if: [{ sem_ver: [doubling, '>=', '1.0.0'] }, 'true', 'false'] },
    'shared/compare': { if: [{ '==': [doubling, 'x'] }, 'true', 'false'] },
    'shared/map': { if: [{ map: [ones, doubling] }, 'true', 'false'] },
  }
  beforeAll(async () => {
    t = await createTestApp()
    served = serveApp(t)
    for (const [name, targeting] of Object.entries(rules)) {
      const res = await t.req('POST', '/api/flags', { token: t.adminToken, body: { name, type: 'BOOLEAN', targeting } })
      expect(res.status).toBe(201)
    }
  })
  afterAll(async () => {
    await served?.stop()
    await t?.close()
  })

  test('each ends in a GENERAL error for running out of work, /health answering meanwhile', async () => {
    const ask = (key: string) =>
      fetch(`${served.base}/ofrep/v1/evaluate/flags/${key}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ context: { targetingKey: 'a' } }),
      }).then(async (r) => ({ key, status: r.status, body: (await r.json()) as Record<string, unknown> }))
    const { answers } = await healthWhile(served.base, [...Object.keys(rules), ...Object.keys(rules)].map(ask))
    for (const a of answers)
      expect(a).toMatchObject({ status: 400, body: { errorCode: 'GENERAL', errorDetails: expect.stringContaining('steps of work') } })
    const bulk = await t.req('POST', '/ofrep/v1/evaluate/flags', { token: t.adminToken, body: { context: { targetingKey: 'a' } } })
    expect(bulk.status).toBe(200)
    expect(bulk.body.flags.every((f: { errorCode?: string }) => f.errorCode === 'GENERAL')).toBe(true)
    // the trace route runs the same rule with the same budget
    const why = await t.req('POST', '/api/flags/shared/reduce/evaluate', { token: t.adminToken, body: { context: {} } })
    expect(why.status).toBe(200)
    expect(why.body).toMatchObject({ errorCode: 'GENERAL' })
  }, 30_000)

  test('the same shapes at a size within the budget still evaluate', async () => {
    const small = { reduce: [Array(8).fill(1), [{ var: 'accumulator' }, { var: 'accumulator' }], 1] }
    const res = await t.req('POST', '/api/flags', {
      token: t.adminToken,
      body: { name: 'shared/small', type: 'BOOLEAN', targeting: { if: [{ in: ['1', { cat: small }] }, 'true', 'false'] } },
    })
    expect(res.status).toBe(201)
    const answer = await t.req('POST', '/ofrep/v1/evaluate/flags/shared/small', { token: t.adminToken, body: { context: {} } })
    expect(answer.body).toMatchObject({ value: true, reason: 'TARGETING_MATCH' })
  })
})

describe('segment chains', () => {
  let t: TestApp
  let served: ServedApp
  beforeAll(async () => {
    t = await createTestApp()
    served = serveApp(t)
  })
  afterAll(async () => {
    await served?.stop()
    await t?.close()
  })

  test('each using the one before twice: writes answer at once; the one too large for flagd format is refused; evaluation is linear', async () => {
    const put = (i: number) =>
      t.req('PUT', `/api/segments/s${i}`, {
        token: t.adminToken,
        body: { rule: i === 0 ? { '==': [{ var: 'tier' }, 'gold'] } : { or: [{ $ref: `s${i - 1}` }, { $ref: `s${i - 1}` }] } },
      })
    const answers: { status: number; reason: string }[] = []
    const writes = (async () => {
      for (let i = 0; i < 20; i++) {
        const res = await put(i)
        answers.push({ status: res.status, reason: res.body?.error?.details?.errors?.[0]?.reason ?? '' })
      }
    })()
    await healthWhile(served.base, [writes]) // /health answers 200 throughout
    // refused from the first that would pass 256 KiB written out; every later one then lacks its base
    const accepted = answers.findIndex((a) => a.status !== 201) - 1
    expect(accepted).toBeGreaterThan(8)
    expect(answers[accepted + 1]).toEqual({ status: 400, reason: expect.stringContaining("in flagd's format") })
    expect(answers.slice(accepted + 2).every((a) => a.status === 400 && a.reason.includes('does not exist'))).toBe(true)
    const flag = await t.req('POST', '/api/flags', {
      token: t.adminToken,
      body: { name: 'chain/uses-last', type: 'BOOLEAN', targeting: { if: [{ $ref: `s${accepted}` }, 'true', 'false'] } },
    })
    expect(flag.status).toBe(201)
    const ask = (tier: string) =>
      t.req('POST', '/ofrep/v1/evaluate/flags/chain/uses-last', { token: t.adminToken, body: { context: { tier } } })
    expect((await ask('gold')).body).toMatchObject({ value: true, reason: 'TARGETING_MATCH' })
    // false everywhere: every reference evaluated, each segment once
    expect((await ask('tin')).body).toMatchObject({ value: false, reason: 'TARGETING_MATCH' })
    const why = await t.req('POST', '/api/flags/chain/uses-last/evaluate', { token: t.adminToken, body: { context: { tier: 'tin' } } })
    expect(why.body.trace.filter((s: { kind: string }) => s.kind === 'segment').length).toBeLessThanOrEqual(2 * (accepted + 1))
    // the flagd-format export holds it, written out
    const exported = await t.req('GET', '/api/migrations/export?format=flagd', { token: t.adminToken })
    expect(exported.status).toBe(200)
    expect(JSON.stringify(exported.body.$evaluators[`s${accepted}`])).not.toContain('$ref')
  }, 30_000)

  test('an import whose segments would be too large written out is refused as a whole, naming the segment', async () => {
    const segments = Object.fromEntries(
      Array.from({ length: 16 }, (_, i) => [
        `imp${i}`,
        { rule: i === 0 ? { '==': [{ var: 'tier' }, 'gold'] } : { or: [{ $ref: `imp${i - 1}` }, { $ref: `imp${i - 1}` }] } },
      ]),
    )
    const doc = { environment: 'x', version: '1.0.0', createdAt: '2026-11-27T00:00:00.000Z', segments, flags: {} }
    const res = await t.req('PUT', '/api/migrations', { token: t.adminToken, body: doc })
    expect(res.status).toBe(400)
    expect(JSON.stringify(res.body.error.details.errors)).toContain("in flagd's format")
    expect((await t.req('GET', '/api/segments/imp0', { token: t.adminToken })).status).toBe(404) // nothing applied
  })

  test('a change to the base that would push a user of it past the size is refused, naming it', async () => {
    const big = { in: [{ var: 'tier' }, Array.from({ length: 400 }, (_, i) => `tier-${i}`)] }
    const res = await t.req('PUT', '/api/segments/s0', { token: t.adminToken, body: { rule: big } })
    expect(res.status).toBe(400)
    expect(JSON.stringify(res.body)).toMatch(/segment s\d+, which uses this one/)
    expect((await t.req('GET', '/api/segments/s0', { token: t.adminToken })).body.rule).toEqual({ '==': [{ var: 'tier' }, 'gold'] })
  })
})

describe('caches keyed by what a rule returns, and by the context', () => {
  let t: TestApp
  let clock = Date.parse('2026-11-27T10:00:00.000Z')
  beforeAll(async () => {
    t = await createTestApp({}, { now: () => new Date(clock) })
  })
  afterAll(async () => {
    await t?.close()
  })

  test('a rule returning context text: 2,000 distinct 60 KB answers leave the heap where it was', async () => {
    const res = await t.req('POST', '/api/flags', {
      token: t.adminToken,
      body: { name: 'echo/v', type: 'STRING', value: 'x', targeting: { var: 'v' } },
    })
    expect(res.status).toBe(201)
    const ask = (i: number) =>
      t.req('POST', '/ofrep/v1/evaluate/flags/echo/v', { token: t.adminToken, body: { context: { v: `${i}-${'y'.repeat(60_000)}` } } })
    expect((await ask(0)).body).toMatchObject({ errorCode: 'GENERAL' })
    Bun.gc(true)
    const before = process.memoryUsage().heapUsed
    for (let i = 1; i <= 2000; i++) expect((await ask(i)).status).toBe(400)
    Bun.gc(true)
    const grown = process.memoryUsage().heapUsed - before
    // each kept answer would be 60 KB: 2,000 of them 120 MB
    expect(grown).toBeLessThan(30 * 1024 * 1024)
  }, 60_000)

  test('a number JSON cannot write (1e400) is not the same context as null: its own answer and ETag', async () => {
    const res = await t.req('POST', '/api/flags', {
      token: t.adminToken,
      body: { name: 'num/big', type: 'BOOLEAN', targeting: { if: [{ '>': [{ var: 'x' }, 5] }, 'true', 'false'] } },
    })
    expect(res.status).toBe(201)
    const bulk = (raw: string, etag?: string) =>
      t.req('POST', '/ofrep/v1/evaluate/flags', {
        token: t.adminToken,
        rawBody: raw,
        headers: { 'content-type': 'application/json', ...(etag ? { 'if-none-match': etag } : {}) },
      })
    const bigOf = (body: { flags: { key: string; value?: unknown }[] }) => body.flags.find((f) => f.key === 'num/big')?.value
    const asNull = await bulk('{"context":{"x":null}}')
    await bulk('{"context":{"x":null}}') // the second ask of a context keeps its answer
    const asHuge = await bulk('{"context":{"x":1e400}}', asNull.headers.get('etag') ?? '')
    expect(asHuge.status).toBe(200)
    expect(asHuge.headers.get('etag')).not.toBe(asNull.headers.get('etag'))
    expect([bigOf(asNull.body), bigOf(asHuge.body)]).toEqual([false, true])
    const single = await t.req('POST', '/ofrep/v1/evaluate/flags/num/big', {
      token: t.adminToken,
      rawBody: '{"context":{"x":1e400}}',
      headers: { 'content-type': 'application/json' },
    })
    expect(single.body.value).toBe(true)
  })

  test('a rule that reads $flagd.timestamp: the bulk answer and its ETag move when its moment passes', async () => {
    const at = Math.floor(clock / 1000) + 60
    const res = await t.req('POST', '/api/flags', {
      token: t.adminToken,
      body: { name: 'time/launch', type: 'BOOLEAN', targeting: { if: [{ '>=': [{ var: '$flagd.timestamp' }, at] }, 'true', 'false'] } },
    })
    expect(res.status).toBe(201)
    const bulk = (etag?: string) =>
      t.req('POST', '/ofrep/v1/evaluate/flags', {
        token: t.adminToken,
        body: { context: { targetingKey: 'k' } },
        ...(etag ? { headers: { 'if-none-match': etag } } : {}),
      })
    const launch = (body: { flags: { key: string; value?: unknown }[] }) => body.flags.find((f) => f.key === 'time/launch')?.value
    const first = await bulk()
    const again = await bulk()
    expect([launch(first.body), launch(again.body)]).toEqual([false, false])
    const etag = first.headers.get('etag') ?? ''
    expect((await bulk(etag)).status).toBe(304) // the same second: nothing moved
    clock += 61_000
    const after = await bulk(etag)
    expect(after.status).toBe(200)
    expect(launch(after.body)).toBe(true)
    const single = await t.req('POST', '/ofrep/v1/evaluate/flags/time/launch', {
      token: t.adminToken,
      body: { context: { targetingKey: 'k' } },
    })
    expect(single.body.value).toBe(true)
  })
})
