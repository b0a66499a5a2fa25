/**
 * Usage reported by in-process providers (docs/openfeature.md#in-process-usage), at the service: only
 * a visible flag's own variants and OpenFeature's reasons are counted, nothing else is kept; a point
 * counts whole evaluations up to a cap; the cumulative series remembered are digests bounded in bytes.
 */

import { afterEach, expect, test } from 'bun:test'
import { POINT_CAP, type ReportedPoint, SERIES_BYTES } from '../../src/services/in-process-usage.ts'
import { createTestApp, SYSTEM, type TestApp } from '../helpers/test-app.ts'

let apps: TestApp[] = []
afterEach(async () => {
  for (const a of apps) await a.close()
  apps = []
})

async function setUp() {
  const a = await createTestApp({})
  apps.push(a)
  const { flags, inProcessUsage, usage } = a.app.services
  await flags.create(SYSTEM, { name: 'shop/dark', type: 'BOOLEAN', value: true })
  await flags.create(SYSTEM, { name: 'shop/color', type: 'STRING', value: 'red', variants: { blue: 'blue' } })
  const read = (name: string) => usage.flagUsage(SYSTEM.principal, name)
  return { a, ingest: (points: ReportedPoint[]) => inProcessUsage.ingest(SYSTEM.principal, points), inProcessUsage, read }
}

const point = (over: Partial<ReportedPoint>): ReportedPoint => ({
  series: 's',
  flag: 'shop/dark',
  variant: 'true',
  reason: 'STATIC',
  value: 1,
  cumulative: false,
  start: '1',
  ...over,
})

test("only the flag's own variants and OpenFeature's reasons count; nothing else is stored", async () => {
  const { ingest, read } = await setUp()
  const made = Array.from({ length: 500 }, (_, i) => point({ variant: `made-up-${i}`, value: 3 }))
  expect(ingest(made)).toBe(0)
  expect(ingest([point({ reason: 'BECAUSE_I_SAID_SO', value: 3 })])).toBe(0)
  expect(ingest([point({ flag: 'shop/nothing', value: 3 })])).toBe(0)
  let usage = await read('shop/dark')
  expect(usage.total).toBe(0)
  expect(usage.variants).toEqual({})
  expect(usage.lastEvaluatedAt).toBeNull()
  // built-in variants, listed ones and the name OFREP gives the answer ('value') all count
  expect(ingest([point({ variant: 'true' }), point({ variant: 'false' }), point({ variant: 'value', reason: 'TARGETING_MATCH' })])).toBe(3)
  expect(ingest([point({ flag: 'shop/color', variant: 'blue' }), point({ flag: 'shop/color', variant: 'value' })])).toBe(2)
  usage = await read('shop/dark')
  expect(usage.variants).toEqual({ true: 1, false: 1, value: 1 })
  expect((await read('shop/color')).variants).toEqual({ blue: 1, value: 1 })
})

test('a point counts whole evaluations, at most the cap; a fraction or nothing moves nothing', async () => {
  const { ingest, read } = await setUp()
  expect(ingest([point({ value: 0.4 }), point({ value: 0 }), point({ value: -3 }), point({ value: Number.NaN })])).toBe(0)
  const untouched = await read('shop/dark')
  expect(untouched.total).toBe(0)
  expect(untouched.lastEvaluatedAt).toBeNull()
  expect(ingest([point({ value: 1e9 })])).toBe(1)
  expect((await read('shop/dark')).total).toBe(POINT_CAP)
  // a cumulative series that jumps by a billion counts the cap, too
  expect(ingest([point({ cumulative: true, value: 5 })])).toBe(1)
  expect(ingest([point({ cumulative: true, value: 5 + 1e9 })])).toBe(1)
  expect((await read('shop/dark')).total).toBe(2 * POINT_CAP + 5)
})

test('cumulative series are remembered as digests, only for points that count, bounded in bytes', async () => {
  const { ingest, inProcessUsage } = await setUp()
  // points that cannot count leave no series behind
  ingest(Array.from({ length: 1000 }, (_, i) => point({ series: `x${i}`, variant: `made-up-${i}`, cumulative: true })))
  ingest(Array.from({ length: 1000 }, (_, i) => point({ series: `y${i}`, flag: 'other/flag', cumulative: true })))
  expect(inProcessUsage.stored()).toEqual({ series: 0, bytes: 0 })
  // many series that count: the table stays within its bytes, forgetting the oldest
  const digest = 'A'.repeat(44) // what the transport hands over: a SHA-256 digest in base64
  for (let round = 0; round < 60; round++)
    ingest(
      Array.from({ length: 1000 }, (_, i) => point({ series: `${digest}${round}-${i}`, cumulative: true, start: '1733550000000000000' })),
    )
  const { series, bytes } = inProcessUsage.stored()
  expect(bytes).toBeLessThanOrEqual(SERIES_BYTES)
  expect(series).toBeGreaterThan(10_000)
  expect(series).toBeLessThan(60_000)
})
