/**
 * The pieces that keep rules bounded (docs/targeting.md#bounds): the written-out size of shared
 * values, the size of segments written out in flagd's format, what reads the clock, and the
 * flagd export of a chain stored before writes were bounded.
 */

import { describe, expect, test } from 'bun:test'
import { buildFlagdDocument } from '../../../src/domain/flagd-document.ts'
import type { Segment } from '../../../src/domain/segment.ts'
import { readsClock } from '../../../src/domain/targeting/clock-use.ts'
import { EXPANDED_RULE_MAX, expandedRuleSize } from '../../../src/domain/targeting/expanded-size.ts'
import { compileRule } from '../../../src/domain/targeting/rule-compiler.ts'
import { runRule } from '../../../src/domain/targeting/targeting.ts'
import { valueSize } from '../../../src/domain/targeting/value-size.ts'

const chain = (n: number) =>
  new Map<string, unknown>(
    Array.from({ length: n }, (_, i) => [
      `s${i}`,
      i === 0 ? { '==': [{ var: 'x' }, 1] } : { or: [{ $ref: `s${i - 1}` }, { $ref: `s${i - 1}` }] },
    ]),
  )

describe('valueSize', () => {
  test('counts scalars, items and text/16, and a shared part as often as it is written out', () => {
    expect([valueSize(1), valueSize(null), valueSize('x'.repeat(160)), valueSize([1, 2]), valueSize({ a: [1] })]).toEqual([1, 1, 11, 3, 4])
    let v: unknown = 1
    for (let i = 0; i < 40; i++) v = [v, v]
    expect(valueSize(v)).toBe(2 ** 41 - 1) // measured in 40 steps, not 2^40
  })
})

describe('segments written out', () => {
  test('the size of a chain doubles per step and is measured without expanding it', () => {
    const rules = chain(40)
    const one = JSON.stringify(rules.get('s0')).length
    expect(expandedRuleSize({ $ref: 's0' }, rules)).toBe(one)
    expect(expandedRuleSize({ $ref: 's1' }, rules)).toBe(JSON.stringify({ or: [rules.get('s0'), rules.get('s0')] }).length)
    expect(expandedRuleSize({ $ref: 's39' }, rules)).toBe(EXPANDED_RULE_MAX + 1) // stops counting past the bound
  })

  test('compiling a chain of 40 is linear, and evaluating it runs each segment once', () => {
    const rules = chain(40)
    const { expr, problems } = compileRule({ if: [{ $ref: 's39' }, 'on', 'off'] }, { segments: rules, variants: new Set(['on', 'off']) })
    expect(problems).toEqual([])
    expect(runRule(expr, { x: 2 }, 'f', { timestamp: 0 })).toEqual({ kind: 'variant', variant: 'off' })
    expect(runRule(expr, { x: 1 }, 'f', { timestamp: 0 })).toEqual({ kind: 'variant', variant: 'on' })
  })

  test('the flagd export leaves out (and names) a stored segment too large written out; the others have no $ref', () => {
    const at = '2026-11-27T00:00:00.000Z'
    const segments: Segment[] = [...chain(20)].map(([name, rule], i) => ({
      id: `seg_${i}`,
      name,
      description: '',
      rule: rule as Segment['rule'],
      createdAt: at,
      updatedAt: at,
      revision: 1,
    }))
    const doc = buildFlagdDocument([], segments, 'test')
    const kept = Object.keys(doc.$evaluators ?? {})
    expect(kept.length).toBeGreaterThan(8)
    expect(kept.length).toBeLessThan(20)
    expect(String(doc.metadata.omittedSegments)).toContain('s19')
    expect(JSON.stringify(doc.$evaluators)).not.toContain('$ref')
  })
})

describe('readsClock', () => {
  const segments = new Map<string, unknown>([['late', { '>': [{ var: '$flagd.timestamp' }, 1] }]])
  test.each([
    [{ var: '$flagd.timestamp' }, true],
    [{ var: ['$flagd.timestamp', 0] }, true],
    [{ var: '$flagd' }, true],
    [{ var: '' }, true],
    [{ var: [{ cat: ['$flagd', '.timestamp'] }] }, true],
    [{ if: [{ $ref: 'late' }, 'a', 'b'] }, true],
    [{ var: '$flagd.flagKey' }, false],
    [{ if: [{ '==': [{ var: 'country' }, 'DE'] }, 'a', 'b'] }, false],
  ])('%j reads the clock: %p', (rule, expected) => {
    expect(readsClock(rule, segments)).toBe(expected)
  })
})

describe('copies of the whole context', () => {
  test('each {"var": ""} at the top is charged the context it copies, before copying it', () => {
    const context = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]))
    const rule = { cat: Array.from({ length: 5000 }, () => ({ var: '' })) }
    const { expr, problems } = compileRule(rule, { segments: new Map() })
    expect(problems).toEqual([])
    const outcome = runRule(expr, context, 'f', { timestamp: 0 })
    expect(outcome).toMatchObject({ kind: 'error', message: expect.stringContaining('steps of work') })
  })
})

describe('splits inside list operators', () => {
  test('a split of thousands of buckets run for every item of a long list is charged its buckets each time', () => {
    const buckets = Array.from({ length: 4000 }, (_, i) => [`v${i}`, 1])
    const rule = { map: [{ var: 'list' }, { fractional: [{ cat: ['k', { var: '' }] }, ...buckets] }] }
    const { expr, problems } = compileRule(rule, { segments: new Map() })
    expect(problems).toEqual([])
    const list = Array.from({ length: 5000 }, (_, i) => i)
    const outcome = runRule(expr, { list }, 'f', { timestamp: 0 })
    expect(outcome).toMatchObject({ kind: 'error', message: expect.stringContaining('steps of work') })
  })
})

describe('nesting', () => {
  test('nestingExceeds counts the outermost object or list as level 1 and stops past the limit', async () => {
    const { nestingExceeds } = await import('../../../src/domain/json-object.ts')
    let v: unknown = 1
    for (let i = 0; i < 24; i++) v = [v]
    expect([
      nestingExceeds(v, 24),
      nestingExceeds(v, 23),
      nestingExceeds(1, 0),
      nestingExceeds({}, 0),
      nestingExceeds({ a: [1] }, 2),
    ]).toEqual([false, true, false, true, false])
    let deep: unknown = 1
    for (let i = 0; i < 100_000; i++) deep = [deep]
    expect(nestingExceeds(deep, 64)).toBe(true) // stops at 65 levels, however deep the value
  })
})
