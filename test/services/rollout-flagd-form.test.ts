/**
 * A progressive rollout's flagd form (docs/change-control.md#progressive-rollouts): compact (one
 * `fractional`, not one per step), read by OpenFeature's own evaluator (`@openfeature/flagd-core`)
 * exactly as OFREP answers, at every step boundary, before the start and after the end, by
 * `targetingKey` and by another attribute, with and without a rule behind it. flagd-core reads the
 * real clock, so the system time is set to the injected one.
 */

import { afterAll, afterEach, beforeAll, expect, setSystemTime, test } from 'bun:test'
import { systemPrincipal } from '../../src/domain/principal.ts'
import { rolloutAt } from '../../src/domain/rollout.ts'
import { oracle } from '../helpers/flagd-oracle.ts'
import { createTestApp, SYSTEM, type TestApp } from '../helpers/test-app.ts'

const START = Date.parse('2026-12-01T09:00:00.250Z') // not on a whole second
let now = START - 60_000
let t: TestApp

const week = { start: new Date(START).toISOString(), end: new Date(START + 7 * 86_400_000 + 1234).toISOString() }
const RULE = { if: [{ in: [{ var: 'plan' }, ['pro', 'team']] }, 'false', { ends_with: [{ var: 'email' }, '@example.com'] }, 'true', null] }
// name, the flag's body, contexts it is asked with
const FLAGS: { name: string; body: Record<string, unknown> }[] = [
  { name: 'plain', body: { type: 'BOOLEAN', value: false, rollout: { variant: 'true', ...week, fromPercent: 5, toPercent: 100 } } },
  {
    name: 'by-account',
    body: { type: 'BOOLEAN', value: false, rollout: { variant: 'true', ...week, fromPercent: 10, toPercent: 90, by: 'account' } },
  },
  {
    name: 'ruled',
    body: {
      type: 'BOOLEAN',
      defaultValue: false,
      targeting: RULE,
      rollout: { variant: 'true', ...week, fromPercent: 0, toPercent: 37.5 },
    },
  },
  {
    // 100 % from half-way (rounded to basis points): contexts without a targetingKey join then
    name: 'nearly-all',
    body: { type: 'BOOLEAN', value: false, rollout: { variant: 'true', ...week, fromPercent: 99.99, toPercent: 100 } },
  },
  {
    name: 'short',
    body: {
      type: 'STRING',
      value: 'old',
      variants: { new: 'new' },
      // 7.5 seconds: 7 steps, at fractions of a second
      rollout: {
        variant: 'new',
        start: new Date(START).toISOString(),
        end: new Date(START + 7500).toISOString(),
        fromPercent: 20,
        toPercent: 80,
      },
    },
  },
]

beforeAll(async () => {
  t = await createTestApp({}, { now: () => new Date(now) })
  for (const f of FLAGS) await t.app.services.flags.create(SYSTEM, { name: `r/${f.name}`, ...f.body })
})
afterEach(() => setSystemTime())
afterAll(async () => {
  await t.close()
})

const exported = () => JSON.parse(t.app.services.migrations.exportFlagd(SYSTEM.principal).text)
const ofrep = (name: string, context: Record<string, unknown>) => {
  const a = JSON.parse(t.app.services.evaluations.one(systemPrincipal('cli'), name, context).text) as Record<string, unknown>
  return { value: a.value, variant: a.variant }
}
const contexts: Record<string, unknown>[] = Array.from({ length: 250 }, (_, i) => ({
  ...(i % 17 === 0 ? {} : { targetingKey: `user-${i}` }),
  ...(i % 5 === 0 ? {} : { account: `acct-${i % 120}` }),
  ...(i % 7 === 0 ? { plan: 'pro' } : i % 11 === 0 ? { email: `u${i}@example.com` } : {}),
}))

test('a flag under a 100-step rollout weighs at most 2 KB in the sync document and the flagd export file, with `by` and with a rule behind it', async () => {
  const doc = exported()
  for (const f of FLAGS) {
    // the sync document sends the flag as compact JSON
    const bytes = Buffer.byteLength(JSON.stringify(doc.flags[`r/${f.name}`]))
    expect(bytes, f.name).toBeLessThanOrEqual(2048)
  }
  // the rule is one split, not one per step
  expect(JSON.stringify(doc.flags['r/plain'].targeting).match(/"fractional"/g)?.length).toBe(1)
  // the export file is laid out for reading: what each flag adds to it
  const fresh = await createTestApp({}, { now: () => new Date(now) })
  try {
    const size = () => Buffer.byteLength(fresh.app.services.migrations.exportFlagd(SYSTEM.principal).text)
    for (const f of FLAGS) {
      const before = size()
      await fresh.app.services.flags.create(SYSTEM, { name: `r/${f.name}`, ...f.body })
      expect(size() - before, `${f.name} in the export file`).toBeLessThanOrEqual(2048)
    }
  } finally {
    await fresh.close()
  }
})

/** The seconds to look at: each step's first second and the one before it, and well outside the window. */
function moments(name: string): number[] {
  const r = FLAGS.find((f) => `r/${f.name}` === name)?.body.rollout as { start: string; end: string }
  const out = new Set<number>()
  const first = Math.floor(Date.parse(r.start) / 1000) - 3600
  const last = Math.ceil(Date.parse(r.end) / 1000) + 3600
  out.add(first)
  out.add(last)
  // every second where the step changes, found from the evaluator's own account, and its neighbours
  let step = rolloutAt(r as never, first).step
  for (let k = 0; k <= 100; k++) {
    // bisect for the first second of step `step + 1`
    let lo = first
    let hi = last
    if (rolloutAt(r as never, hi).step <= step) break
    while (lo + 1 < hi) {
      const mid = Math.floor((lo + hi) / 2)
      if (rolloutAt(r as never, mid).step > step) hi = mid
      else lo = mid
    }
    out.add(lo)
    out.add(hi)
    step = rolloutAt(r as never, hi).step
  }
  expect(out.size).toBeLessThanOrEqual(2 + 2 * 101)
  return [...out].sort((a, b) => a - b)
}

test('flagd-core on the export agrees with OFREP at every step boundary, before the start and after the end', () => {
  const doc = exported()
  for (const f of FLAGS) {
    const name = `r/${f.name}`
    const seconds = moments(name)
    const r = f.body.rollout as { start: string; end: string; fromPercent: number; toPercent: number }
    let before = new Set<number>()
    let steps = 0
    const differences: string[] = []
    for (const second of seconds) {
      now = second * 1000 + 999
      setSystemTime(new Date(now))
      const on = new Set<number>()
      for (const [i, context] of contexts.entries()) {
        const ours = ofrep(name, context)
        const theirs = oracle(doc, name, context)
        if (theirs.value !== ours.value || theirs.variant !== ours.variant)
          differences.push(`${name} ${JSON.stringify(context)} at ${second}: ${JSON.stringify(theirs)} ≠ ${JSON.stringify(ours)}`)
        if (ours.variant === (f.body.rollout as { variant: string }).variant) on.add(i)
      }
      // whoever had it keeps it
      for (const i of before) if (!on.has(i)) differences.push(`${name}: context ${i} lost the variant at ${second}`)
      if (on.size !== before.size) steps++
      before = on
    }
    expect(differences.slice(0, 5)).toEqual([])
    // the share moved, and ended where the rollout ends
    expect(steps, name).toBeGreaterThan(0)
    expect(rolloutAt(r as never, (seconds.at(-1) as number) + 1).percent).toBe(r.toPercent)
    expect(rolloutAt(r as never, seconds[0] as number).percent).toBe(r.fromPercent)
  }
}, 60_000)

test('a step begins at the first whole second at or after its moment, and the flagd rule moves then too', () => {
  // 7 steps over 7.5 s from x.250: step k begins at ceil(start + 7.5 k / 7 s)
  const r = FLAGS.find((f) => f.name === 'short')?.body.rollout as never
  const start = START / 1000
  for (let k = 1; k <= 7; k++) {
    const at = Math.ceil(start + (7.5 * k) / 7)
    expect(rolloutAt(r, at).step, `step ${k}`).toBe(k)
    expect(rolloutAt(r, at - 1).step, `before step ${k}`).toBe(k - 1)
  }
  expect(rolloutAt(r, Math.floor(start) - 1)).toEqual({ percent: 20, step: 0, steps: 7 })
  expect(rolloutAt(r, Math.ceil(start + 7.5))).toEqual({ percent: 80, step: 7, steps: 7 })
})
