/** flagd's rule engine on its own: validation with places, operators' edge cases, the work bound, the trace. */

import { describe, expect, test } from 'bun:test'
import { bucketHash, scaleHash } from '../../../src/domain/targeting/fractional.ts'
import { compileRule, type RuleEnv } from '../../../src/domain/targeting/rule-compiler.ts'
import { readVersion, semVer } from '../../../src/domain/targeting/sem-ver.ts'
import { clampFractionalWeights, ruleShapeProblems, runRule } from '../../../src/domain/targeting/targeting.ts'

const env = (variants = ['on', 'off'], segments: Record<string, unknown> = {}): RuleEnv => ({
  segments: new Map(Object.entries(segments)),
  variants: new Set(variants),
})
const problems = (rule: unknown, e = env()) => compileRule(rule, e).problems
// the moment every rule here runs at: no outcome depends on today's date
const AT = Date.parse('2026-12-01T00:00:00Z') / 1000
const evaluate = (rule: unknown, context: Record<string, unknown>, e = env()) => {
  const { expr, problems: found } = compileRule(rule, e)
  expect(found).toEqual([])
  return runRule(expr, context, 'flag-key', { trace: true, timestamp: AT })
}

describe('validation names the place of every problem', () => {
  test('unknown operators, texts that are no variant, bad weights, dangling and cyclic segments', () => {
    expect(problems({ if: [{ regex: ['a', 'b'] }, 'on', 'of'] })).toEqual([
      { field: 'targeting.if[0]', reason: expect.stringContaining('unknown operator "regex"') },
      { field: 'targeting.if[2]', reason: '"of" is not a variant of this flag (variants: on, off)' },
    ])
    expect(problems({ fractional: [{ var: 'targetingKey' }, ['on', 0], ['off', 0]] })).toEqual([
      { field: 'targeting.fractional', reason: 'every weight of this split is 0: give at least one bucket a weight above 0' },
    ])
    expect(problems({ fractional: [['on', 0], ['off']] })).toEqual([]) // a bucket without a weight weighs 1
    expect(problems({ fractional: [['on', -5], ['off', 1.5], 'x'] })).toEqual([
      { field: 'targeting.fractional[0][1]', reason: 'a fractional weight is a non-negative integer' },
      { field: 'targeting.fractional[1][1]', reason: 'a fractional weight is a non-negative integer' },
      { field: 'targeting.fractional[2]', reason: 'a bucket is [variant, weight]' },
    ])
    expect(problems({ if: [{ $ref: 'nope' }, 'on', 'off'] })).toEqual([
      { field: 'targeting.if[0].$ref', reason: 'segment nope does not exist' },
    ])
    const cyclic = env(['on'], { a: { $ref: 'b' }, b: { or: [{ $ref: 'a' }] } })
    expect(problems({ if: [{ $ref: 'a' }, 'on'] }, cyclic)[0]?.reason).toBe('segments refer to each other in a cycle: a → b → a')
    expect(problems({ if: { x: 1 } })).toEqual([{ field: 'targeting.if', reason: 'if takes a list of arguments' }])
    expect(problems({ '==': [1, 1], '!=': [1, 2] })[0]?.reason).toContain('exactly one key')
  })

  test('texts in conditions are not variant names; those in branches and buckets are', () => {
    expect(problems({ if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'on', 'off'] })).toEqual([])
    expect(
      problems({
        if: [
          {
            fractional: [
              ['yes', 1],
              ['no', 1],
            ],
          },
          'on',
          'off',
        ],
      }),
    ).toEqual([])
    expect(problems({ fractional: [{ var: 'email' }, ['on', 1], ['maybe', 1]] })[0]?.field).toBe('targeting.fractional[2][0]')
  })

  test('size and depth limits', () => {
    let deep: unknown = 'on'
    for (let i = 0; i < 30; i++) deep = { if: [true, deep] }
    expect(ruleShapeProblems(deep, 'targeting')[0]?.reason).toBe('a rule is nested at most 24 levels deep')
    expect(ruleShapeProblems({ in: ['a', 'x'.repeat(70_000)] }, 'targeting')[0]?.reason).toContain('at most 65536 bytes')
  })

  test('negative weights of a flagd document are clamped with their places', () => {
    expect(
      clampFractionalWeights({
        fractional: [
          ['on', -50],
          ['off', 100],
        ],
      }),
    ).toEqual({
      rule: {
        fractional: [
          ['on', 0],
          ['off', 100],
        ],
      },
      clamped: ['targeting.fractional[0][1]'],
      emptied: [],
    })
  })

  test("a flagd document's split that weighs nothing (after clamping) becomes the default's rule, with its place", () => {
    const rule = { if: [{ '==': [{ var: 'a' }, 1] }, { fractional: [{ var: 'targetingKey' }, ['one', -5], ['two', 0]] }, 'x'] }
    expect(clampFractionalWeights(rule)).toEqual({
      rule: { if: [{ '==': [{ var: 'a' }, 1] }, { if: [true, null] }, 'x'] },
      clamped: ['targeting.if[1].fractional[1][1]'],
      emptied: ['targeting.if[1].fractional'],
    })
  })
})

describe('operators', () => {
  test('sem_ver: lenient prefixes and partial versions, pre-releases, bad input is null', () => {
    expect(readVersion('v1.2.3')).toMatchObject({ major: 1, minor: 2, patch: 3 })
    expect(readVersion('1.2')).toMatchObject({ major: 1, minor: 2, patch: 0 })
    expect(readVersion(1.5)).toMatchObject({ major: 1, minor: 5, patch: 0 })
    expect(readVersion('01.2.3')).toBeUndefined()
    expect(readVersion('1.2.3.4')).toBeUndefined()
    expect(readVersion(`1.2.3-${'a'.repeat(300)}`)).toBeUndefined()
    expect(semVer(['1.0.0-rc.1', '<', '1.0.0'])).toBe(true)
    expect(semVer(['1.0.0-alpha.2', '<', '1.0.0-alpha.10'])).toBe(true)
    expect(semVer(['1.0.0-alpha', '<', '1.0.0-alpha.1'])).toBe(true)
    expect(semVer(['1.0.0+build.1', '=', '1.0.0'])).toBe(true)
    expect(semVer(['2.5.1', '^', '2.0.0'])).toBe(true)
    expect(semVer(['2.5.1', '~', '2.4.0'])).toBe(false)
    expect(semVer(['2.0.0', '==', '2.0.0'])).toBeNull()
    expect(semVer(['2.0.0', '='])).toBeNull()
  })

  test('fractional bucketing is exact for every 32-bit hash and total', () => {
    for (const [hash, total] of [
      [0xffffffff, 2_147_483_647],
      [0x80000000, 100],
      [123_456_789, 100_000],
      [1, 1],
    ] as const)
      expect(scaleHash(hash, total)).toBe(Number((BigInt(hash) * BigInt(total)) >> 32n))
  })

  test('fractional hashes the UTF-8 bytes of the bucket key, as flagd (Go) does, not UTF-16 code units', () => {
    // an independent MurmurHash3 x86 32 (seed 0) over bytes, to check Bun's against
    const murmur = (bytes: Uint8Array): number => {
      const c1 = 0xcc9e2d51
      const c2 = 0x1b873593
      let h = 0
      const blocks = bytes.length >> 2
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
      for (let i = 0; i < blocks; i++) {
        let k = view.getUint32(i * 4, true)
        k = Math.imul(k, c1)
        k = (k << 15) | (k >>> 17)
        k = Math.imul(k, c2)
        h ^= k
        h = (h << 13) | (h >>> 19)
        h = (Math.imul(h, 5) + 0xe6546b64) | 0
      }
      const tail = blocks * 4
      const rest = bytes.length & 3
      if (rest > 0) {
        let k = 0
        if (rest === 3) k ^= (bytes[tail + 2] as number) << 16
        if (rest >= 2) k ^= (bytes[tail + 1] as number) << 8
        k ^= bytes[tail] as number
        k = Math.imul(k, c1)
        k = (k << 15) | (k >>> 17)
        h ^= Math.imul(k, c2)
      }
      h ^= bytes.length
      h ^= h >>> 16
      h = Math.imul(h, 0x85ebca6b)
      h ^= h >>> 13
      h = Math.imul(h, 0xc2b2ae35)
      h ^= h >>> 16
      return h >>> 0
    }
    for (const key of ['flag-keyuser-1', 'flag-keyJürgen', 'flag-key🙂', 'flag-key東京', ''])
      expect(bucketHash(key)).toBe(murmur(new TextEncoder().encode(key)))
    // the bucket of a non-ASCII key follows from those bytes
    const split = { fractional: [{ var: 'name' }, ['on', 50], ['off', 50]] }
    for (const name of ['Jürgen', 'Zoë', '東京', '🙂']) {
      const expected = scaleHash(murmur(new TextEncoder().encode(name)), 100) < 50 ? 'on' : 'off'
      expect(evaluate(split, { name })).toMatchObject({ variant: expected })
    }
  })

  test('inherited property names are not context attributes', () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'constructor.name'])
      expect(evaluate({ if: [{ '==': [{ var: name }, null] }, 'on', 'off'] }, { a: 1 })).toMatchObject({ variant: 'on' })
    expect(evaluate({ if: [{ var: 'constructor' }, 'on', 'off'] }, {})).toMatchObject({ variant: 'off' })
    expect(evaluate({ if: [{ '==': [{ var: 'constructor' }, 1] }, 'on', 'off'] }, { constructor: 1 })).toMatchObject({ variant: 'on' })
  })

  test('a word compared with a number is an error; equal kinds compare', () => {
    expect(evaluate({ if: [{ '<': [{ var: 'age' }, 18] }, 'on', 'off'] }, { age: 12 })).toMatchObject({ kind: 'variant', variant: 'on' })
    expect(evaluate({ if: [{ '<': [{ var: 'age' }, 18] }, 'on', 'off'] }, { age: 'twelve' }).kind).toBe('error')
    expect(evaluate({ if: [{ in: [{ var: 'country' }, ['DE', 'FR']] }, 'on', 'off'] }, { country: 'FR' })).toMatchObject({ variant: 'on' })
  })

  test('$flagd.flagKey and $flagd.timestamp; a context cannot replace them', () => {
    expect(evaluate({ if: [{ '==': [{ var: '$flagd.flagKey' }, 'flag-key'] }, 'on', 'off'] }, { $flagd: { flagKey: 'x' } })).toMatchObject({
      variant: 'on',
    })
    expect(evaluate({ if: [{ '>=': [{ var: '$flagd.timestamp' }, AT] }, 'on', 'off'] }, {})).toMatchObject({ variant: 'on' })
    expect(evaluate({ if: [{ '>': [{ var: '$flagd.timestamp' }, AT] }, 'on', 'off'] }, {})).toMatchObject({ variant: 'off' })
  })

  test('a result that is no variant name is an error; null is the default; true is "true"', () => {
    expect(evaluate({ '+': [1, 2] }, {}, env(['on'])).kind).toBe('error')
    expect(evaluate({ if: [false, 'on'] }, {}).kind).toBe('default')
    expect(evaluate({ '==': [1, 1] }, {}, env(['true', 'false']))).toMatchObject({ kind: 'variant', variant: 'true' })
  })
})

describe('bounded work', () => {
  const list = Array.from({ length: 5000 }, (_, i) => i)
  test.each([
    ['a list doubled at every step', { reduce: [{ var: 'list' }, { merge: [{ var: 'accumulator' }, { var: 'accumulator' }] }, [1]] }],
    ['a text doubled at every step', { reduce: [{ var: 'list' }, { cat: [{ var: 'accumulator' }, { var: 'accumulator' }] }, 'xy'] }],
    [
      'a long list searched for every item of another',
      { some: [{ var: 'list' }, { in: [{ '+': [{ var: '' }, 100_000] }, { merge: [list, list] }] }] },
    ],
  ])('%s stops at the budget as an error', (_, condition) => {
    const outcome = evaluate({ if: [condition, 'on', 'off'] }, { list })
    expect(outcome.kind).toBe('error')
    expect((outcome as { message: string }).message).toContain('more than 200000 steps')
  })

  test('ordinary rules over ordinary contexts stay far below it', () => {
    const rule = {
      if: [{ and: [{ in: [{ var: 'country' }, ['DE', 'FR', 'NL']] }, { sem_ver: [{ var: 'version' }, '>=', '2.1.0'] }] }, 'on', 'off'],
    }
    expect(evaluate(rule, { country: 'NL', version: '2.3.0' })).toMatchObject({ kind: 'variant', variant: 'on' })
  })
})

describe('trace', () => {
  test('conditions with their places and results, segments entered, the bucket', () => {
    const e = env(['on', 'off'], { staff: { ends_with: [{ var: 'email' }, '@example.com'] } })
    const outcome = evaluate(
      {
        if: [
          { '==': [{ var: 'plan' }, 'pro'] },
          'on',
          { $ref: 'staff' },
          'on',
          {
            fractional: [
              ['on', 20],
              ['off', 80],
            ],
          },
        ],
      },
      { plan: 'free', email: 'a@b.org', targetingKey: 'user-7' },
      e,
    )
    expect(outcome.trace).toEqual([
      { kind: 'condition', path: 'targeting.if[0]', rule: { '==': [{ var: 'plan' }, 'pro'] }, result: false },
      { kind: 'segment', name: 'staff', matched: false },
      { kind: 'condition', path: 'targeting.if[2]', rule: { $ref: 'staff' }, result: false },
      {
        kind: 'fractional',
        path: 'targeting.if[4].fractional',
        bucketKey: 'flag-keyuser-7',
        bucket: expect.any(Number),
        total: 100,
        variant: outcome.kind === 'variant' ? outcome.variant : '',
      },
    ])
  })
})
