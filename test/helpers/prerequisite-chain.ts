/**
 * One chain of prerequisites for the parity tests (docs/targeting.md#prerequisites-in-flagd-format):
 * `<p>gate` (on) ← `<p>split` (a rule, a split, a rollout) ← `<p>ab` (an A/B test) ← `<p>top`
 * (a split, requiring both), and the contexts to ask it with; the same in the flagd-core test and the
 * in-process provider test, so both judge one thing.
 */

/** A rollout's window: its start and end, ISO 8601. */
export interface RolloutWindow {
  start: string
  end: string
}

/** The chain's flags in creation order, named under `prefix`; the split's rollout of `c` (0 → 40 %) runs over `window`. */
export function prerequisiteChain(prefix: string, window: RolloutWindow): [string, Record<string, unknown>][] {
  return [
    [`${prefix}gate`, { type: 'BOOLEAN', value: true }],
    [
      `${prefix}split`,
      {
        type: 'STRING',
        value: 'a',
        variants: { a: 'a', b: 'b', c: 'c' },
        targeting: {
          if: [
            { '==': [{ var: 'country' }, 'NO'] },
            'c',
            {
              fractional: [
                ['a', 30],
                ['b', 70],
              ],
            },
          ],
        },
        rollout: { variant: 'c', ...window, fromPercent: 0, toPercent: 40 },
        prerequisites: [{ flag: `${prefix}gate`, variants: ['true'] }],
      },
    ],
    [`${prefix}ab`, { type: 'AB-TEST', chancePercentB: 40, prerequisites: [{ flag: `${prefix}split`, variants: ['b', 'c'] }] }],
    [
      `${prefix}top`,
      {
        type: 'STRING',
        value: 'plain',
        variants: { fancy: 'fancy', plain: 'plain' },
        targeting: {
          fractional: [
            ['fancy', 1],
            ['plain', 1],
          ],
        },
        prerequisites: [
          { flag: `${prefix}split`, variants: ['b'] },
          { flag: `${prefix}ab`, variants: ['B'] },
        ],
      },
    ],
  ]
}

/** The flags of the chain that answer per context (every one but the gate). */
export const askedOf = (prefix: string): string[] => ['split', 'ab', 'top'].map((n) => `${prefix}${n}`)

/** The `i`-th context: most with a targeting key, some in Norway (where the split's rule decides). */
export function chainContext(i: number): { targetingKey?: string; country?: string } {
  return { ...(i % 23 === 0 ? {} : { targetingKey: `user-${i}` }), ...(i % 9 === 0 ? { country: 'NO' } : {}) }
}
