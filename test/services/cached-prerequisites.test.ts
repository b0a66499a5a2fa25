/**
 * Prerequisites through the caching evaluator (docs/performance.md#prerequisites-made-nearly-free):
 * the plain evaluator's answers, byte for byte, for any context and second, in every environment,
 * one flag at a time and in bulk, over a graph with every kind of required flag (static, disabled,
 * ruled, failing, split, reading the clock, reached by two paths, in chains); and the work it saves:
 * a prerequisite the context cannot move is never answered again, and one on a ruled flag costs
 * that rule only.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { EvaluationContext } from '../../src/domain/evaluation.ts'
import type { Flag } from '../../src/domain/flag.ts'
import type { TokenPrincipal } from '../../src/domain/principal.ts'
import { RequestCache } from '../../src/domain/request-cache.ts'
import { cachedFlagEvaluator } from '../../src/services/cached-flag-evaluator.ts'
import { flagsIn } from '../../src/services/environment-views.ts'
import { createFlagEvaluator, type FlagEvaluator, type PlainFlagEvaluator } from '../../src/services/flag-evaluator.ts'
import { createServedSnapshots } from '../../src/services/served-snapshot.ts'
import { createTestApp, SYSTEM, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
const now = Date.parse('2026-12-01T12:00:00Z')
const clock = () => now
let plain: FlagEvaluator
let cached: FlagEvaluator
const ENVS = ['development', 'staging']

const on = { on: true, off: false }
const graph: [string, Record<string, unknown>][] = [
  ['base', { type: 'BOOLEAN', value: true }],
  ['off', { type: 'BOOLEAN', value: true, enabled: false }],
  ['mid', { type: 'BOOLEAN', value: true, prerequisites: [{ flag: 'base', variants: ['true'] }] }],
  ['gate', { type: 'BOOLEAN', variants: on, targeting: { if: [{ in: [{ var: 'country' }, ['DE', 'NO']] }, 'on', 'off'] } }],
  // names a variant, something else (an error), or nothing (the default)
  ['echo', { type: 'STRING', variants: { a: 'a', b: 'b' }, defaultValue: 'b', targeting: { var: 'choice' } }],
  ['split', { type: 'AB-TEST', chancePercentB: 50 }],
  ['late', { type: 'BOOLEAN', variants: on, targeting: { if: [{ '>': [{ var: '$flagd.timestamp' }, 1_764_590_400] }, 'on', 'off'] } }],
  ['shared', { type: 'STRING', variants: { x: 'x', y: 'y' }, targeting: { if: [{ '>=': [{ var: 'age' }, 18] }, 'x', 'y'] } }],
  ['left', { type: 'BOOLEAN', value: true, prerequisites: [{ flag: 'shared', variants: ['x'] }] }],
  [
    'right',
    {
      type: 'BOOLEAN',
      variants: on,
      targeting: { if: [{ '==': [{ var: 'choice' }, 'a'] }, 'on', 'off'] },
      prerequisites: [{ flag: 'shared', variants: ['x', 'y'] }],
    },
  ],
  [
    'd1',
    {
      type: 'BOOLEAN',
      variants: on,
      targeting: { if: [{ '>=': [{ var: 'age' }, 18] }, 'on', 'off'] },
      prerequisites: [
        { flag: 'gate', variants: ['on'] },
        { flag: 'base', variants: ['true'] },
      ],
    },
  ],
  [
    'd2',
    {
      type: 'STRING',
      value: 'on',
      variants: { v: 'v' },
      targeting: { if: [{ var: 'vip' }, 'v'] },
      prerequisites: [{ flag: 'mid', variants: ['true'] }],
    },
  ],
  ['d3', { type: 'BOOLEAN', value: true, prerequisites: [{ flag: 'off', variants: ['false'] }] }],
  ['d4', { type: 'STRING', value: 'yes', prerequisites: [{ flag: 'echo', variants: ['a'] }] }],
  ['d5', { type: 'AB-TEST', chancePercentB: 20, prerequisites: [{ flag: 'split', variants: ['B'] }] }],
  [
    'd6',
    {
      type: 'BOOLEAN',
      value: false,
      prerequisites: [
        { flag: 'left', variants: ['true'] },
        { flag: 'right', variants: ['on'] },
      ],
    },
  ],
  ['d7', { type: 'BOOLEAN', value: true, prerequisites: [{ flag: 'late', variants: ['on'] }] }],
  [
    'd8',
    {
      type: 'BOOLEAN',
      value: true,
      prerequisites: [
        { flag: 'd1', variants: ['on'] },
        { flag: 'd5', variants: ['A'] },
        { flag: 'mid', variants: ['false'] },
      ],
    },
  ],
]

beforeAll(async () => {
  t = await createTestApp()
  const flags = t.app.services.flags
  await t.app.services.environments.put(SYSTEM, 'staging', {})
  for (const [name, body] of graph) await flags.create(SYSTEM, { name, ...body } as never)
  // staging serves another answer of the static and the clock-reading prerequisites
  await flags.update(SYSTEM, 'base', { value: false }, undefined, undefined, 'staging')
  await flags.update(SYSTEM, 'late', { enabled: false }, undefined, undefined, 'staging')
  // the plain twin builds a served snapshot on every call, keeping nothing
  plain = createFlagEvaluator(createServedSnapshots({ keep: false }), clock)
  cached = cachedFlagEvaluator(createFlagEvaluator(createServedSnapshots(), clock), new RequestCache(1 << 20))
})
afterAll(async () => {
  await t?.close()
})

const contexts = fc.record(
  {
    targetingKey: fc.constantFrom('u1', 'u2', 'visitor-3', 'k9', ''),
    country: fc.constantFrom('DE', 'NO', 'FR'),
    choice: fc.constantFrom('a', 'b', 'c', 7, null),
    age: fc.constantFrom(12, 18, 40, '40'),
    vip: fc.boolean(),
  },
  { requiredKeys: [] },
)
const seconds = fc.constantFrom(undefined, 1_764_590_399, 1_764_590_401)

test('one flag: the plain answer for any context, second and environment, asked again and again', () => {
  fc.assert(
    fc.property(contexts, seconds, fc.constantFrom(...ENVS), (context, second, env) => {
      const snapshot = t.app.store.committed()
      for (const flag of flagsIn(snapshot, env).values()) {
        const want = plain.one(flag, context, plain.served(snapshot, env), second)
        for (let i = 0; i < 2; i++) {
          const got = cached.one(flag, context, cached.served(snapshot, env), second)
          expect([flag.name, got.text, got.failure?.details, got.variant, got.reason]).toEqual([
            flag.name,
            want.text,
            want.failure?.details,
            want.variant,
            want.reason,
          ])
        }
      }
    }),
    { numRuns: 200 },
  )
})

test('every flag in bulk: the plain text for any context, second and environment', () => {
  const scope = (env: string): TokenPrincipal => ({
    kind: 'token',
    tokenId: `tok_${env}`,
    name: 'test',
    permissions: ['flag:evaluate'],
    flagPrefixes: [],
    ...(env === 'development' ? {} : { environment: env }),
  })
  fc.assert(
    fc.property(contexts, seconds, fc.constantFrom(...ENVS), (context, second, env) => {
      const snapshot = t.app.store.committed()
      const etag = `"${snapshot.revisionOf('flags')}-${JSON.stringify([context, env, second])}"`
      const want = plain.all(scope(env), context, plain.served(snapshot, env), second, etag).flags
      for (let i = 0; i < 3; i++) expect(cached.all(scope(env), context, cached.served(snapshot, env), second, etag).flags).toBe(want)
    }),
    { numRuns: 100 },
  )
})

test('a prerequisite the context cannot move is never answered again, and one on a ruled flag costs its rule alone', () => {
  const asked: string[] = []
  const inner = createFlagEvaluator(createServedSnapshots(), clock)
  // every way the caching evaluator may ask the plain one about a flag, written down as it asks
  const noted =
    <A extends unknown[], R>(what: string, f: (flag: Flag, ...rest: A) => R) =>
    (flag: Flag, ...rest: A): R => {
      asked.push(`${what} ${flag.name}`)
      return f(flag, ...rest)
    }
  const spy: PlainFlagEvaluator = {
    ...inner,
    own: noted('own', inner.own),
    one: noted('one', inner.one),
    unmet: noted('unmet', inner.unmet),
    outcome: noted('rule', inner.outcome),
    answerFrom: noted('answer', inner.answerFrom),
  }
  const evaluator = cachedFlagEvaluator(spy, new RequestCache(1 << 20))
  const snapshot = t.app.store.committed()
  const served = evaluator.served(snapshot, 'development')
  const flag = (name: string) => served.flags.get(name) as Flag
  const ask = (name: string, context: EvaluationContext) => JSON.parse(evaluator.one(flag(name), context, served).text)
  // first answers of each outcome are made and kept; what follows is the steady state measured
  for (const country of ['DE', 'FR'])
    for (const age of [12, 40]) {
      ask('d1', { country, age })
      ask('d2', { vip: age > 18 })
    }
  asked.length = 0
  expect(ask('d1', { country: 'NO', age: 30 })).toMatchObject({ value: true, reason: 'TARGETING_MATCH' })
  expect(ask('d1', { country: 'FR', age: 30 })).toMatchObject({ value: false, reason: 'DEFAULT' })
  expect(ask('d2', { vip: true })).toMatchObject({ value: 'v', reason: 'TARGETING_MATCH' })
  expect(ask('d2', {})).toMatchObject({ value: 'on', reason: 'DEFAULT' })
  // d1: the gate's rule and its own; d2: its own rule only (mid ← base decided once per snapshot)
  expect(asked).toEqual(['rule gate', 'rule d1', 'rule gate', 'rule d2', 'rule d2'])
})
