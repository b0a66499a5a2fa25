/**
 * A `fractional` whose buckets are all literal is prepared once at compile time
 * (docs/targeting.md#splits); it must answer and trace exactly as the general form, which a weight
 * written as an expression forces, and be charged for its buckets.
 */

import { expect, test } from 'bun:test'
import { compileRule } from '../../../src/domain/targeting/rule-compiler.ts'
import { runRule } from '../../../src/domain/targeting/targeting.ts'

const general = (buckets: unknown[][]) => buckets.map(([v, w]) => (w === undefined ? [v] : [v, { '+': [w, 0] }]))
const compile = (rule: unknown) => {
  const { expr, problems } = compileRule(rule, { segments: new Map() })
  expect(problems).toEqual([])
  return expr
}

test('literal buckets answer, trace and spend as the general form, with the default key and with a given one', () => {
  const buckets = [['0', 500], ['1', 95], ['2'], ['3', 0], ['4', 9000], ['5', 404]]
  const keys: (unknown[] | [])[] = [[], [{ cat: [{ var: '$flagd.flagKey' }, { var: 'account' }] }], ['a fixed seed'], [{ var: 'n' }]]
  for (const key of keys) {
    const fixed = compile({ if: [{ fractional: [...key, ...buckets] }, 'on', 'off'] })
    const slow = compile({ if: [{ fractional: [...key, ...general(buckets)] }, 'on', 'off'] })
    // the trace, without the rule's own text (which differs by the weights' spelling)
    const split = (expr: ReturnType<typeof compile>, context: Record<string, unknown>) => {
      const outcome = runRule(expr, context, 'flag/x', { timestamp: 0, trace: true })
      return { ...outcome, trace: outcome.trace?.map(({ rule: _, ...step }: Record<string, unknown>) => step) }
    }
    for (let i = 0; i < 300; i++) {
      const context = {
        ...(i % 7 === 0 ? {} : { targetingKey: `user-${i}` }),
        ...(i % 5 === 0 ? {} : { account: `acct-${i}` }),
        ...(i % 3 === 0 ? { n: i } : {}),
      }
      const a = split(fixed, context)
      const b = split(slow, context)
      expect(a.kind, JSON.stringify({ key, context })).toBe(b.kind)
      expect(a.trace, JSON.stringify({ key, context })).toEqual(b.trace)
    }
    // each run is charged for its buckets: never more than the general form (whose weights cost a step each)
    const tight = (expr: ReturnType<typeof compile>) =>
      [5, 10, 15, 20, 30, 40].map((limit) => runRule(expr, { targetingKey: 'u', account: 'a' }, 'flag/x', { timestamp: 0, limit }).kind)
    const [f, g] = [tight(fixed), tight(slow)]
    for (const [i, kind] of f.entries()) if (kind === 'error') expect(g[i], JSON.stringify(key)).toBe('error')
    expect(f.at(0), JSON.stringify(key)).toBe('error')
  }
})
