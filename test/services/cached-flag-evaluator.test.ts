/**
 * The caching decorator of the evaluator gives the plain evaluator's answers, byte for byte, for
 * any context, scope and second, asked once or again and again, and across a change of the flags;
 * a `304` counts the flags the plain evaluator would list.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { TokenPrincipal } from '../../src/domain/principal.ts'
import { RequestCache } from '../../src/domain/request-cache.ts'
import { cachedFlagEvaluator } from '../../src/services/cached-flag-evaluator.ts'
import { flagsIn } from '../../src/services/environment-views.ts'
import { createFlagEvaluator, type FlagEvaluator } from '../../src/services/flag-evaluator.ts'
import { createServedSnapshots } from '../../src/services/served-snapshot.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
let now = Date.parse('2026-11-27T12:00:00Z')
const clock = () => now
let plain: FlagEvaluator
let cached: FlagEvaluator

const token = (flagPrefixes: string[]): TokenPrincipal => ({
  kind: 'token',
  tokenId: `tok_${flagPrefixes.join('_')}`,
  name: 'test',
  permissions: ['flag:evaluate'],
  flagPrefixes,
})
const scopes = [token([]), token(['app/']), token(['web/', 'zzz/'])]

beforeAll(async () => {
  t = await createTestApp()
  const create = async (body: object) => expect((await t.req('POST', '/api/flags', { token: t.adminToken, body })).status).toBe(201)
  expect(
    (await t.req('PUT', '/api/segments/pros', { token: t.adminToken, body: { rule: { '==': [{ var: 'plan' }, 'pro'] } } })).status,
  ).toBe(201)
  await create({ name: 'app/on', type: 'BOOLEAN', value: true })
  await create({ name: 'app/off', type: 'BOOLEAN', value: true, enabled: false })
  await create({ name: 'app/size', type: 'INTEGER', defaultValue: 3 })
  await create({ name: 'app/ab', type: 'AB-TEST', chancePercentB: 30 })
  await create({
    name: 'app/plan',
    type: 'STRING',
    variants: { gold: 'gold', plain: 'plain' },
    defaultValue: 'plain',
    targeting: { if: [{ $ref: 'pros' }, 'gold', null] },
  })
  await create({
    name: 'web/split',
    type: 'BOOLEAN',
    variants: { on: true, off: false },
    targeting: { fractional: [{ var: 'targetingKey' }, ['on', 50], ['off', 50]] },
  })
  await create({
    name: 'web/echo',
    type: 'STRING',
    variants: { a: 'a', b: 'b' },
    targeting: { var: 'choice' }, // may name a variant, or anything else (an error)
  })
  await create({
    name: 'web/late',
    type: 'BOOLEAN',
    variants: { on: true, off: false },
    targeting: { if: [{ '>': [{ var: '$flagd.timestamp' }, 1_795_000_000] }, 'on', 'off'] },
  })
  // the plain twin builds a served snapshot on every call, keeping nothing
  plain = createFlagEvaluator(createServedSnapshots({ keep: false }), clock)
  cached = cachedFlagEvaluator(createFlagEvaluator(createServedSnapshots(), clock), new RequestCache(1 << 20))
})
afterAll(async () => {
  await t?.close()
})

const contexts = fc.record(
  {
    targetingKey: fc.constantFrom('u1', 'u2', 'visitor-3', ''),
    plan: fc.constantFrom('pro', 'free', 1),
    choice: fc.constantFrom('a', 'b', 'c', 7),
  },
  { requiredKeys: [] },
)

test('one flag: the same answer for any context, asked any number of times', () => {
  fc.assert(
    fc.property(contexts, fc.integer({ min: 1, max: 3 }), (context, times) => {
      const snapshot = t.app.store.committed()
      for (const flag of flagsIn(snapshot, 'development').values()) {
        const want = plain.one(flag, context, plain.served(snapshot, 'development'))
        for (let i = 0; i < times; i++) {
          const got = cached.one(flag, context, cached.served(snapshot, 'development'))
          expect(got.text).toBe(want.text)
          expect(got.failure?.details).toBe(want.failure?.details)
          expect([got.variant, got.reason]).toEqual([want.variant, want.reason])
        }
      }
    }),
    { numRuns: 150 },
  )
})

test('every flag of a scope: the same text, first asked, kept, and served from the cache', () => {
  fc.assert(
    fc.property(
      contexts,
      fc.constantFrom(...scopes),
      fc.constantFrom(undefined, 1_794_999_999, 1_795_000_001),
      (context, scope, second) => {
        const snapshot = t.app.store.committed()
        const etag = `"${snapshot.revisionOf('flags')}-${JSON.stringify([context, scope.flagPrefixes, second])}"`
        const want = plain.all(scope, context, plain.served(snapshot, 'development'), second, etag).flags
        for (let i = 0; i < 3; i++)
          expect(cached.all(scope, context, cached.served(snapshot, 'development'), second, etag).flags).toBe(want)
        const names = (c: { fixed: readonly { flag: { name: string } }[] }) => c.fixed.map((f) => f.flag.name).sort()
        expect(names(cached.asked(scope, cached.served(snapshot, 'development')))).toEqual(
          names(plain.asked(scope, plain.served(snapshot, 'development'))),
        )
      },
    ),
    { numRuns: 120 },
  )
})

test('a change of the flags is seen at once, by a kept answer too', async () => {
  const scope = scopes[0] as TokenPrincipal
  const context = { targetingKey: 'u1', plan: 'pro' }
  const ask = () => {
    const snapshot = t.app.store.committed()
    const etag = `"${snapshot.revisionOf('flags')}"`
    return [
      plain.all(scope, context, plain.served(snapshot, 'development'), undefined, etag).flags,
      cached.all(scope, context, cached.served(snapshot, 'development'), undefined, etag).flags,
    ]
  }
  ask()
  ask() // kept from the second time
  expect((await t.req('PUT', '/api/flags/app/on', { token: t.adminToken, body: { value: false } })).status).toBe(200)
  expect(
    (await t.req('PUT', '/api/segments/pros', { token: t.adminToken, body: { rule: { '==': [{ var: 'plan' }, 'free'] } } })).status,
  ).toBe(200)
  const [want, got] = ask()
  expect(got).toBe(want as string)
  expect(got).toContain('"key":"app/on","value":false')
  expect(got).toContain('"key":"app/plan","value":"plain"')
  now += 1000
})
