/** docs/openfeature.md#ofrep: the evaluation table, and the A/B split checked against OpenFeature flagd's own `fractional`. */

import { expect, test } from 'bun:test'
import { FlagdCore } from '@openfeature/flagd-core'
import { evaluate as evaluateAt, splitBucket, splitVariant } from '../../src/domain/evaluation.ts'
import type { Flag } from '../../src/domain/flag.ts'

// the rules here do not read the time; every evaluation runs at one fixed moment
const evaluate = (f: Flag, context: Parameters<typeof evaluateAt>[1]) => evaluateAt(f, context, undefined, { timestamp: 0 })

const flag = (over: Partial<Flag>): Flag =>
  ({
    id: 'flg_1',
    name: 'app/f',
    type: 'BOOLEAN',
    description: '',
    defaultValue: false,
    valueExists: false,
    createdAt: '',
    updatedAt: '',
    revision: 3,
    ...over,
  }) as Flag

test('the evaluation table: STATIC, DEFAULT and SPLIT with their variants and metadata', () => {
  expect(evaluate(flag({ valueExists: true, value: true }), {})).toEqual({
    key: 'app/f',
    value: true,
    reason: 'STATIC',
    variant: 'value',
    metadata: { type: 'BOOLEAN', revision: 3 },
  })
  expect(evaluate(flag({ type: 'INTEGER', defaultValue: 7 }), {})).toMatchObject({ value: 7, reason: 'DEFAULT', variant: 'default' })
  expect(evaluate(flag({ type: 'TAG', defaultValue: ['a'], valueExists: true, value: ['a', 'b'] }), {})).toMatchObject({
    value: ['a', 'b'],
    reason: 'STATIC',
  })
  const ab = { type: 'AB-TEST' as const, defaultValue: 'A', chancePercentB: 100 }
  expect(evaluate(flag({ ...ab, valueExists: true, value: 'A' }), { targetingKey: 'u1' })).toMatchObject({
    value: 'A',
    reason: 'STATIC',
    variant: 'A',
  })
  expect(evaluate(flag(ab), { targetingKey: 'u1' })).toMatchObject({ value: 'B', reason: 'SPLIT', variant: 'B' })
  for (const context of [{}, { targetingKey: '' }, { targetingKey: 42 }, { targetingKey: null }]) {
    expect(evaluate(flag(ab), context)).toMatchObject({ value: 'A', reason: 'DEFAULT', variant: 'A' })
  }
})

test('hash edge cases of the flagd test bed land in the right bucket', () => {
  // keys whose MurmurHash3 is exactly 0, 1, 2^31-1, 2^31 and 2^32-1 (flagd-testbed, fractional-v2)
  const edges: [string, number][] = [
    ['ejOoVL', 0],
    ['bY9fO-', 1],
    ['SI7p-', 2 ** 31 - 1],
    ['6LvT0', 2 ** 31],
    ['ceQdGm', 2 ** 32 - 1],
  ]
  for (const [key, hash] of edges) {
    expect(Bun.hash.murmur32v3(key, 0)).toBe(hash)
    expect(splitBucket('', key)).toBe(Math.floor((hash * 100_000) / 2 ** 32))
  }
  expect(splitBucket('', 'ceQdGm')).toBe(99_999)
  expect(splitVariant('', 'SI7p-', 50)).toBe('A') // bucket 49,999: the last of A at 50 %
  expect(splitVariant('', '6LvT0', 50)).toBe('B') // bucket 50,000: the first of B
  expect(splitVariant('', 'ejOoVL', 100)).toBe('B')
  expect(splitVariant('', 'ceQdGm', 0)).toBe('A')
})

test('the split equals flagd-core fractional for thousands of keys and several percentages', () => {
  const names = ['exp/checkout', 'a', 'team/mobile/new_onboarding']
  const percentages = [0, 0.001, 12.5, 33.333, 50, 99.999, 100]
  const core = new FlagdCore()
  const flags: Record<string, unknown> = {}
  for (const name of names) {
    for (const p of percentages) {
      const w = Math.round(p * 1000)
      flags[`${name}#${p}`] = {
        state: 'ENABLED',
        variants: { A: 'A', B: 'B' },
        defaultVariant: 'A',
        targeting: {
          fractional: [
            ['A', 100_000 - w],
            ['B', w],
          ],
        },
      }
    }
  }
  core.setConfigurations(JSON.stringify({ flags }))
  let checked = 0
  for (const name of names) {
    for (const p of percentages) {
      for (let i = 0; i < 700; i++) {
        const key = i % 3 === 0 ? `user-${i}` : i % 3 === 1 ? crypto.randomUUID() : `${i * 7919}@example.com`
        // flagd hashes the flag key it was asked for: here "<name>#<p>", so hash that same string
        const expected = core.resolveStringEvaluation(`${name}#${p}`, 'x', { targetingKey: key }).value
        expect(splitVariant(`${name}#${p}`, key, p)).toBe(expected as 'A' | 'B')
        checked++
      }
    }
  }
  expect(checked).toBeGreaterThan(10_000)
})

test('sticky and monotonic: raising chancePercentB only moves users from A to B', () => {
  for (let i = 0; i < 2000; i++) {
    const key = `u${i}`
    let wasB = false
    for (const p of [0, 10, 25, 50, 75, 90, 100]) {
      const v = splitVariant('exp/x', key, p)
      expect(splitVariant('exp/x', key, p)).toBe(v)
      if (wasB) expect(v).toBe('B')
      wasB = v === 'B'
    }
  }
})

test('the share of B follows chancePercentB', () => {
  const n = 20_000
  let b = 0
  for (let i = 0; i < n; i++) if (splitVariant('exp/share', `user-${i}`, 30) === 'B') b++
  expect(b / n).toBeGreaterThan(0.28)
  expect(b / n).toBeLessThan(0.32)
})
