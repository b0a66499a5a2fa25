/**
 * Property test: rules and contexts generated at random, evaluated by flagd's engine and by
 * OpenFeature's `@openfeature/flagd-core`, give the same value, variant, reason and error. The
 * grammar covers what rules are made of in practice: comparisons (loose, strict, between),
 * membership, texts, versions, logic, arithmetic, `missing`, segments, nested `if` and
 * `fractional` splits, over contexts with texts, numbers, booleans, nulls, lists and objects.
 */

import { expect, test } from 'bun:test'
import fc from 'fast-check'
import { type FlagdFlag, oracle, ours } from '../../helpers/flagd-oracle.ts'

const VARIANTS = ['on', 'off', 'beta', 'true', 'false']

// Contexts are typed as applications send them (a key holds numbers, or texts, or versions) and
// hold no nulls: there flagd-core's own layers (compiled top level, interpreted and optimized
// branches) agree. Where they do not (a word compared with a number, a null under a default,
// absent compared with 0 by operand order, `cat` of a null), flagd follows flagd-core's compiled top level with the
// context value first, and unit tests pin that down.
const NUMBER_KEYS = ['age', 'user.age', 'score']
const TEXT_KEYS = ['email', 'name', 'plan', 'user.name', 'targetingKey']
const TEXTS = ['a', 'b', 'abc', '', 'x@example.com', '@example.com', 'beta', 'pro', 'free']

// no "$" in texts: flagd-core expands $ref with String.replace, where "$&" in a segment means something
const text = fc.oneof(
  fc.constantFrom(...TEXTS),
  fc.string({ unit: 'grapheme-ascii', maxLength: 6 }).filter((t) => !t.includes('$')),
)
const num = fc.oneof(fc.integer({ min: -3, max: 30 }), fc.constantFrom(0.5, 1.5, 2.5))
const withDefault = <T>(keys: string[], fallback: fc.Arbitrary<T>) =>
  fc.oneof(
    fc.constantFrom(...keys).map((k) => ({ var: k })),
    fc.tuple(fc.constantFrom(...keys), fallback).map(([k, d]) => ({ var: [k, d] })),
  )
const numVar = withDefault(NUMBER_KEYS, num)
// on the right of a comparison, a number key always has a default (absent against 0 is one of the disagreements)
const numVarRight = fc.tuple(fc.constantFrom(...NUMBER_KEYS), num).map(([k, d]) => ({ var: [k, d] }))
const textVar = withDefault(TEXT_KEYS, text)
const nonZero = num.filter((n) => n !== 0)

const { condition } = fc.letrec<{ condition: unknown }>((tie) => ({
  condition: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc
      .tuple(fc.constantFrom('==', '!=', '===', '!==', '<', '<=', '>', '>='), numVar, fc.oneof(num, numVarRight))
      .map(([op, a, b]) => ({ [op]: [a, b] })),
    fc.tuple(fc.constantFrom('==', '!=', '<', '>'), nonZero, numVarRight).map(([op, a, b]) => ({ [op]: [a, b] })),
    fc
      .tuple(fc.constantFrom('==', '!=', '===', '!==', '<', '>='), textVar, fc.oneof(text, textVar))
      .map(([op, a, b]) => ({ [op]: [a, b] })),
    fc.tuple(fc.constantFrom('<', '<='), num, numVarRight, num).map(([op, a, b, c]) => ({ [op]: [a, b, c] })),
    fc.tuple(textVar, fc.oneof(fc.array(text, { maxLength: 4 }), text, fc.constant({ var: 'tags' }))).map(([a, b]) => ({ in: [a, b] })),
    fc.tuple(text, textVar).map(([a, b]) => ({ in: [a, b] })),
    fc.tuple(fc.constantFrom('starts_with', 'ends_with'), textVar, fc.oneof(text, textVar)).map(([op, a, b]) => ({ [op]: [a, b] })),
    fc
      .tuple(
        fc.constant({ var: 'version' }),
        fc.constantFrom('=', '!=', '<', '<=', '>', '>=', '^', '~', '==='),
        fc.constantFrom('1.2.3', '2.0.0', 'v1', '1.2', '2.0.0-rc.1', 'x'),
      )
      .map(([a, op, v]) => ({ sem_ver: [a, op, v] })),
    tie('condition').map((c) => ({ '!': [c] })),
    fc.oneof(textVar, numVar).map((v) => ({ '!!': [v] })),
    fc.array(tie('condition'), { minLength: 1, maxLength: 3 }).map((cs) => ({ and: cs })),
    fc.array(tie('condition'), { minLength: 1, maxLength: 3 }).map((cs) => ({ or: cs })),
    fc.array(fc.constantFrom(...NUMBER_KEYS, ...TEXT_KEYS, 'absent'), { minLength: 1, maxLength: 3 }).map((ks) => ({ missing: ks })),
    fc.tuple(numVar, fc.integer({ min: 1, max: 5 })).map(([v, n]) => ({ '==': [{ '%': [v, n] }, 0] })),
    fc.tuple(numVar, numVar, fc.integer({ min: 0, max: 40 })).map(([a, b, n]) => ({ '>': [{ '+': [a, b] }, n] })),
    fc.tuple(textVar, text).map(([v, t]) => ({ '==': [{ cat: [v, '-', t] }, 'a-b'] })),
    fc.constant({ $ref: 'segment' }),
  ),
}))
// a segment refers to no segment (a cycle is refused at write)
const segmentRule = condition.filter((c) => !JSON.stringify(c).includes('$ref'))

const variant = fc.constantFrom(...VARIANTS, null)
const bucket = fc.tuple(fc.constantFrom(...VARIANTS), fc.integer({ min: 0, max: 60 }))
const fractional = fc.oneof(
  fc.array(bucket, { minLength: 1, maxLength: 4 }).map((bs) => ({ fractional: bs })),
  fc
    .tuple(
      fc.constantFrom({ var: 'email' }, { cat: [{ var: '$flagd.flagKey' }, { var: ['name', 'anonymous'] }] }, 'seed'),
      fc.array(bucket, { minLength: 1, maxLength: 4 }),
    )
    .map(([key, bs]) => ({ fractional: [key, ...bs] })),
)
const { result } = fc.letrec<{ result: unknown }>((tie) => ({
  result: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    variant,
    fractional,
    fc.tuple(condition, tie('result'), tie('result')).map(([c, a, b]) => ({ if: [c, a, b] })),
    fc.tuple(condition, tie('result')).map(([c, a]) => ({ if: [c, a] })),
    fc.tuple(condition, tie('result'), condition, tie('result'), tie('result')).map(([c, a, d, b, e]) => ({ if: [c, a, d, b, e] })),
    condition,
  ),
}))

const context = fc.record(
  {
    targetingKey: fc.oneof(
      fc.constantFrom('user-1', 'jon@company.com', 'ejOoVL'),
      fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 12 }),
    ),
    email: text,
    name: text,
    plan: text,
    age: num,
    score: num,
    version: fc.oneof(fc.constantFrom('2.0.0', '1.2', 'v1.2.3', '10', '2.0.0-rc.2', 'nope'), fc.constant(1.5)),
    tags: fc.array(text, { maxLength: 4 }),
    user: fc.record({ name: text, age: num }, { requiredKeys: ['age'] }),
  },
  // number keys are always there: flagd-core's layers disagree on an absent number against 0
  { requiredKeys: ['age', 'score', 'user'] },
)

// a flag's targeting is an operation (an object), as flagd's schema has it
const targetingRule = result.filter((r) => r !== null && typeof r === 'object')

test('flagd engine = @openfeature/flagd-core on generated rules and contexts', () => {
  fc.assert(
    fc.property(
      targetingRule,
      segmentRule,
      variant,
      fc.array(context, { minLength: 1, maxLength: 4 }),
      (targeting, segment, defaultVariant, contexts) => {
        const flag: FlagdFlag = {
          state: 'ENABLED',
          variants: { on: 'ON', off: 'OFF', beta: 'BETA', true: 'T', false: 'F' },
          ...(defaultVariant === null ? {} : { defaultVariant }),
          targeting,
        }
        const document = { flags: { 'gen-flag': flag }, $evaluators: { segment } }
        for (const ctx of contexts) {
          expect({ ctx, targeting, ...ours(flag, 'gen-flag', ctx, { segment }) }).toEqual({
            ctx,
            targeting,
            ...oracle(document, 'gen-flag', ctx),
          })
        }
      },
    ),
    { numRuns: 2000 },
  )
}, 60_000)
