/**
 * Outside a rollout's share a context gets exactly the answer of the flag without the rollout,
 * reason included (docs/change-control.md#progressive-rollouts): `STATIC` for a flag with a value
 * and no rule, `SPLIT` for an unpinned A/B test, `DEFAULT` where the flag's own rule serves none.
 * At the evaluation service, plain and cached, on an injected clock.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { splitVariant } from '../../src/domain/evaluation.ts'
import { systemPrincipal } from '../../src/domain/principal.ts'
import { createTestApp, SYSTEM, type TestApp } from '../helpers/test-app.ts'

const START = Date.parse('2026-12-01T09:00:00.000Z')
let now = START - 60_000
let t: TestApp

const rollout = (variant: string) => ({
  variant,
  start: new Date(START).toISOString(),
  end: new Date(START + 1000_000).toISOString(),
  fromPercent: 30,
  toPercent: 60,
})
// each flag twice: with a rollout, and its twin without one
const FLAGS: { name: string; body: Record<string, unknown>; variant: string }[] = [
  { name: 'static', body: { type: 'BOOLEAN', value: false }, variant: 'true' },
  { name: 'default', body: { type: 'INTEGER', defaultValue: 3, variants: { big: 100 } }, variant: 'big' },
  { name: 'split', body: { type: 'AB-TEST', chancePercentB: 50 }, variant: 'B' },
  {
    name: 'ruled',
    body: { type: 'STRING', value: 'x', variants: { y: 'y' }, targeting: { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'y', null] } },
    variant: 'y',
  },
]

beforeAll(async () => {
  t = await createTestApp({}, { now: () => new Date(now) })
  for (const f of FLAGS) {
    for (const [name, extra] of [
      [`with/${f.name}`, { rollout: rollout(f.variant) }],
      [`without/${f.name}`, {}],
    ] as const)
      await t.app.services.flags.create(SYSTEM, { name, ...f.body, ...extra })
  }
})
afterAll(async () => {
  await t.close()
})

const answer = (name: string, context: Record<string, unknown>) =>
  JSON.parse(t.app.services.evaluations.one(systemPrincipal('cli'), name, context).text) as Record<string, unknown>
const core = (a: Record<string, unknown>) => ({ value: a.value, variant: a.variant, reason: a.reason })

test("outside the share: the answer of the flag without the rollout, reason included; inside: the rollout's variant", () => {
  for (const offset of [0, 500_000, 2000_000]) {
    now = START + offset
    for (const f of FLAGS) {
      let inside = 0
      let outside = 0
      for (let i = 0; i < 200; i++) {
        const context = { targetingKey: `user-${i}`, ...(i % 3 === 0 ? { plan: 'pro' } : {}) }
        const got = answer(`with/${f.name}`, context)
        if (got.reason === 'TARGETING_MATCH' && got.variant === f.variant && f.name !== 'ruled') inside++
        else if (f.name === 'ruled' && got.reason === 'TARGETING_MATCH' && context.plan === undefined) inside++
        else {
          outside++
          // an A/B test splits by its own name: its twin's split is computed for this one's
          const split = splitVariant(`with/${f.name}`, context.targetingKey, 50)
          const twin = f.name === 'split' ? { value: split, variant: split, reason: 'SPLIT' } : core(answer(`without/${f.name}`, context))
          expect(core(got), `${f.name} for user-${i} at +${offset} ms`).toEqual(twin)
        }
      }
      expect(inside, f.name).toBeGreaterThan(0)
      expect(outside, f.name).toBeGreaterThan(0)
    }
  }
  // no targetingKey: never in the share
  expect(answer('with/static', {})).toMatchObject({ value: false, variant: 'value', reason: 'STATIC' })
  expect(answer('with/default', {})).toMatchObject({ value: 3, variant: 'default', reason: 'DEFAULT' })
  expect(answer('with/ruled', {})).toMatchObject({ value: 'x', variant: 'value', reason: 'DEFAULT' }) // its own rule served none
})
