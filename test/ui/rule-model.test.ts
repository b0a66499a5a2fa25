/** The rule builder's model: what it writes it reads back; what it cannot show exactly it refuses. */

import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { compileRule } from '../../src/domain/targeting/rule-compiler.ts'
import { describeChange } from '../../src/ui/app/audit-diff.ts'
import { locate } from '../../src/ui/app/json-locate.ts'
import { OPERATORS, readTargeting, type TargetingModel, writeTargeting } from '../../src/ui/app/rule-model.ts'
import { stepInWords, targetingInWords, targetingSummary } from '../../src/ui/app/rule-words.ts'
import { readSegment, type SegmentModel, writeSegment } from '../../src/ui/app/segment-model.ts'

const rollout: TargetingModel = {
  rules: [
    { conditions: [{ attribute: 'email', operator: 'ends with', values: ['@example.com'] }], serve: 'on' },
    {
      conditions: [
        { attribute: 'country', operator: 'one of', values: ['DE', 'FR'] },
        { attribute: 'appVersion', operator: 'version ≥', values: ['2.1.0'] },
      ],
      serve: 'off',
    },
    { conditions: [{ attribute: '', operator: 'in segment', values: ['beta'] }], serve: 'on' },
  ],
  split: {
    by: '',
    weights: [
      { variant: 'on', weight: 20 },
      { variant: 'off', weight: 80 },
    ],
  },
  fallback: '',
}

describe('the builder writes flagd JsonLogic and reads back exactly what it wrote', () => {
  test('a worked example', () => {
    const rule = writeTargeting(rollout)
    expect(rule).toEqual({
      if: [
        { ends_with: [{ var: 'email' }, '@example.com'] },
        'on',
        { and: [{ in: [{ var: 'country' }, ['DE', 'FR']] }, { sem_ver: [{ var: 'appVersion' }, '>=', '2.1.0'] }] },
        'off',
        { $ref: 'beta' },
        'on',
        {
          fractional: [
            ['on', 20],
            ['off', 80],
          ],
        },
      ],
    })
    expect(readTargeting(rule)).toEqual(rollout)
    // the service accepts it as it is
    expect(compileRule(rule, { segments: new Map([['beta', true]]), variants: new Set(['on', 'off']) }).problems).toEqual([])
    expect(targetingInWords(rule)).toEqual([
      'if email ends with "@example.com" → on',
      'if country is one of "DE", "FR" and appVersion ≥ "2.1.0" (semantic version) → off',
      'if in segment beta → on',
      'otherwise 20 % on, 80 % off, sticky by targetingKey',
    ])
    expect(targetingSummary(rule)).toBe('20 % on · 3 rules')
  })

  test('every operator, splits sticky by an attribute, defaults', () => {
    for (const op of OPERATORS) {
      const values = op.kind === 'list' ? ['a', 'b'] : op.kind === 'number' ? [18] : op.kind === 'version' ? ['1.2.3'] : ['x']
      const model: TargetingModel = {
        rules: [{ conditions: [{ attribute: op.kind === 'segment' ? '' : 'attr', operator: op.id, values }], serve: 'on' }],
        split: null,
        fallback: 'off',
      }
      expect(readTargeting(writeTargeting(model))).toEqual(model)
    }
    const sticky: TargetingModel = {
      rules: [],
      split: {
        by: 'companyId',
        weights: [
          { variant: 'A', weight: 1 },
          { variant: 'B', weight: 3 },
        ],
      },
      fallback: 'A',
    }
    expect(writeTargeting(sticky)).toEqual({
      or: [{ fractional: [{ cat: [{ var: '$flagd.flagKey' }, { var: 'companyId' }] }, ['A', 1], ['B', 3]] }, 'A'],
    })
    expect(readTargeting(writeTargeting(sticky))).toEqual(sticky)
    expect(targetingInWords(writeTargeting(sticky))).toEqual(['25 % A, 75 % B, sticky by companyId', 'without a companyId → A'])
    const always: TargetingModel = { rules: [], split: null, fallback: 'on' }
    expect(readTargeting(writeTargeting(always))).toEqual(always)
    expect(writeTargeting({ rules: [], split: null, fallback: '' })).toBeNull()
    expect(readTargeting(null)).toEqual({ rules: [], split: null, fallback: '' })
  })

  test('an if ending in null (the docs\' "otherwise the normal answer") opens as the same if without it', () => {
    const condition = { '==': [{ var: 'country' }, 'DE'] }
    const model = readTargeting({ if: [condition, 'on', null] })
    expect(model).toEqual(readTargeting({ if: [condition, 'on'] }) as TargetingModel)
    expect(writeTargeting(model as TargetingModel)).toEqual({ if: [condition, 'on'] })
    expect(readTargeting({ if: [condition, 'on', null, 'off'] })).toBeUndefined() // null as a condition: not the builder's
  })

  test('a rule the builder cannot show exactly is refused, never rewritten', () => {
    for (const rule of [
      { if: [{ '==': [{ var: 'a' }, 1] }, 'on', { if: [{ var: 'b' }, 'off', 'on'] }] }, // nested if
      { if: [{ '==': [1, { var: 'a' }] }, 'on'] }, // value first
      { fractional: [{ var: 'email' }, ['on', 50], ['off', 50]] }, // bucket key not the builder's
      { fractional: [['on'], ['off']] }, // weights left out
      { if: [{ and: [{ '==': [{ var: 'a' }, 1] }] }, 'on'] }, // an and of one
      { if: [{ '!': [{ $ref: 'beta' }] }, 'on'] }, // ! with a list
      { if: [{ '==': [{ var: 'a' }, 1] }, 'on'], extra: 1 },
      { map: [[1], { var: '' }] },
      'on',
    ])
      expect(readTargeting(rule)).toBeUndefined()
  })

  test('generated models survive the round trip', () => {
    const literal = fc.oneof(fc.string({ maxLength: 5 }), fc.integer(), fc.boolean())
    const condition = fc.constantFrom(...OPERATORS).chain((op) =>
      fc.record({
        attribute: op.kind === 'segment' ? fc.constant('') : fc.stringMatching(/^[a-z][a-zA-Z.]{0,8}$/),
        operator: fc.constant(op.id),
        values:
          op.kind === 'list'
            ? fc.array(literal, { maxLength: 3 })
            : op.kind === 'segment' || op.kind === 'version' || op.id === 'contains' || op.id.endsWith('with')
              ? fc.tuple(fc.string({ minLength: 1, maxLength: 5 }))
              : fc.tuple(literal),
      }),
    )
    const variant = fc.constantFrom('on', 'off', 'x')
    const model = fc.record({
      rules: fc.array(fc.record({ conditions: fc.array(condition, { minLength: 1, maxLength: 3 }), serve: variant }), { maxLength: 4 }),
      split: fc.option(
        fc.record({
          by: fc.constantFrom('', 'companyId'),
          weights: fc.array(fc.record({ variant, weight: fc.nat(100) }), { minLength: 1, maxLength: 3 }),
        }),
        { nil: null },
      ),
      fallback: fc.constantFrom('', 'on'),
    })
    fc.assert(
      fc.property(model, (m) => {
        const rule = writeTargeting(m as TargetingModel)
        expect(readTargeting(rule)).toEqual(m as TargetingModel)
      }),
      { numRuns: 500 },
    )
  })
})

describe('the JSON editor finds the place the service names', () => {
  test('paths into objects and lists, the nearest enclosing value for a path the text lacks', () => {
    const text = JSON.stringify({ if: [{ $ref: 'nope' }, 'on', { fractional: [['on', -5]] }] }, null, 2)
    const ref = locate(text, 'targeting', 'targeting.if[0].$ref')
    expect(text.slice(ref!.start, ref!.end)).toBe('"nope"')
    expect(ref!.line).toBe(4)
    const weight = locate(text, 'targeting', 'targeting.if[2].fractional[0][1]')
    expect(text.slice(weight!.start, weight!.end)).toBe('-5')
    const missing = locate(text, 'targeting', 'targeting.if[1].more')
    expect(text.slice(missing!.start, missing!.end)).toBe('"on"')
    expect(locate('{"==": [1, ', 'rule', 'rule.==[1]')).toBeDefined() // unfinished text: no loop, no throw
    expect(locate('', 'rule', 'rule.x')?.line).toBe(1) // the whole (empty) text
  })
})

describe('segments in the builder', () => {
  test('all of / any of conditions round-trip; anything else stays JSON', () => {
    const any: SegmentModel = {
      join: 'or',
      conditions: [
        { attribute: 'email', operator: 'ends with', values: ['@example.com'] },
        { attribute: '', operator: 'in segment', values: ['staff'] },
      ],
    }
    expect(writeSegment(any)).toEqual({ or: [{ ends_with: [{ var: 'email' }, '@example.com'] }, { $ref: 'staff' }] })
    expect(readSegment(writeSegment(any))).toEqual(any)
    const one: SegmentModel = { join: 'and', conditions: [{ attribute: 'plan', operator: 'one of', values: ['pro', 'team'] }] }
    expect(readSegment(writeSegment(one))).toEqual(one)
    expect(readSegment({ or: [{ var: 'beta' }, { '==': [{ var: 'a' }, 1] }] })).toBeUndefined()
    expect(readSegment(true)).toBeUndefined()
  })
})

describe("why this value in the builder's words", () => {
  test('conditions of the rule list are named by their rule; the split by its bucket; anything else as the service says it', () => {
    expect(stepInWords({ kind: 'condition', path: 'targeting.if[2]', rule: { in: [{ var: 'country' }, ['DE']] }, result: false })).toBe(
      'Rule 2: country is one of "DE": not matched',
    )
    expect(
      stepInWords({ kind: 'fractional', path: 'targeting.if[4].fractional', bucketKey: 'fu1', bucket: 37, total: 100, variant: 'on' }),
    ).toBe('Split: bucket 37 of 100 (37.0 %) → on')
    expect(stepInWords({ kind: 'segment', name: 'beta', matched: true })).toBe('segment beta matched')
    expect(
      stepInWords({ kind: 'condition', path: 'targeting.if[0].and[1]', rule: { var: 'x' }, result: true, text: 'as the service says' }),
    ).toBe('as the service says')
    expect(
      describeChange({
        id: 1,
        at: '',
        actor: { type: 'user', id: 'u', name: 'a' },
        source: 'api',
        action: 'flag.updated',
        target: { type: 'flag' },
        before: { targeting: null },
        after: { targeting: { if: [{ $ref: 'beta' }, 'on'] } },
      }),
    ).toBe("targeting none → (if in segment beta → on; otherwise the flag's own value)")
  })
})
