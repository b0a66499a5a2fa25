/**
 * The targeting rows of `bun run bench` (goals in docs/performance.md): one rule evaluated in-process by flagd's engine
 * and by OpenFeature's `@openfeature/flagd-core` (the choice of engine, measured); an OFREP single
 * evaluation of a flag with that rule against a bare Bun that reads the body; and a bulk evaluation
 * of 1,000 flags of which 200 have rules, with a different context on every request.
 */

import { FlagdCore } from '@openfeature/flagd-core'
import { rolloutRule } from '../src/domain/rollout.ts'
import { compileRule } from '../src/domain/targeting/rule-compiler.ts'
import { runRule } from '../src/domain/targeting/targeting.ts'
import type { Row, Scenario } from './fixture.ts'
import { wrk } from './wrk.ts'

/** What the main bench hands over. */
export interface TargetingContext {
  url: string
  auth: Record<string, string>
  scenario: Scenario
  row: Row
  dir: string
  seconds: number
}

/** Five conditions, a segment and a fractional split: the rule of the goals. */
export const BENCH_SEGMENT = { or: [{ ends_with: [{ var: 'email' }, '@example.com'] }, { in: [{ var: 'plan' }, ['beta', 'staff']] }] }
export const BENCH_RULE = {
  if: [
    { '==': [{ var: 'country' }, 'NZ'] },
    'off',
    { and: [{ $ref: 'bench-testers' }, { sem_ver: [{ var: 'appVersion' }, '>=', '2.1.0'] }] },
    'on',
    { starts_with: [{ var: 'targetingKey' }, 'internal-'] },
    'on',
    { '>': [{ var: 'age' }, 65] },
    'off',
    {
      fractional: [
        ['on', 20],
        ['off', 80],
      ],
    },
  ],
}

/** The `i`th of the varied contexts the in-process rows evaluate. */
export const contextOf = (i: number) => ({
  targetingKey: `user-${i}`,
  email: i % 7 === 0 ? `u${i}@example.com` : `u${i}@mail.test`,
  plan: i % 5 === 0 ? 'beta' : 'free',
  appVersion: `2.${i % 4}.0`,
  country: i % 11 === 0 ? 'NZ' : 'DE',
  age: 20 + (i % 60),
})

/** Microseconds per evaluation of `evaluate` over `n` varied contexts (best of 5 runs). */
export function perEvaluation(evaluate: (context: Record<string, unknown>) => unknown, n: number): number {
  const contexts = Array.from({ length: 1000 }, (_, i) => contextOf(i))
  for (let i = 0; i < n; i++) evaluate(contexts[i % 1000] as Record<string, unknown>) // warm-up
  let best = Number.POSITIVE_INFINITY
  for (let r = 0; r < 5; r++) {
    const started = performance.now()
    for (let i = 0; i < n; i++) evaluate(contexts[i % 1000] as Record<string, unknown>)
    best = Math.min(best, ((performance.now() - started) * 1000) / n)
  }
  return best
}

/** The in-process row: flagd's engine against flagd-core on the same rule and contexts. */
export function inProcessRow(row: Row): void {
  const { expr, problems } = compileRule(BENCH_RULE, {
    segments: new Map([['bench-testers', BENCH_SEGMENT]]),
    variants: new Set(['on', 'off']),
  })
  if (problems.length > 0) throw new Error(JSON.stringify(problems))
  const ours = perEvaluation((ctx) => runRule(expr, ctx, 'bench/rule', { timestamp: 1_796_000_000 }), 200_000)
  const core = new FlagdCore(undefined, { error() {}, warn() {}, info() {}, debug() {} })
  core.setConfigurations(
    JSON.stringify({
      flags: { 'bench/rule': { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'off', targeting: BENCH_RULE } },
      $evaluators: { 'bench-testers': BENCH_SEGMENT },
    }),
  )
  const theirs = perEvaluation((ctx) => core.resolveBooleanEvaluation('bench/rule', false, ctx as never), 50_000)
  row(
    'One rule in-process (5 conditions, a segment, a fractional split), varied contexts',
    `flagd's engine ${ours.toFixed(2)} µs per evaluation; @openfeature/flagd-core ${theirs.toFixed(2)} µs (${(theirs / ours).toFixed(1)} × slower)`,
    '≤ 2 µs (flagd Go: 7–11 µs)',
    ours <= 2,
    { oursUs: ours, flagdCoreUs: theirs },
  )
}

/**
 * The rollout row: the same rule with a progressive rollout in front of it (100 steps over a week,
 * half-way through), as in-process providers receive it (docs/change-control.md#progressive-rollouts).
 */
export function rolloutRow(row: Row): void {
  const now = Date.now()
  const rollout = {
    variant: 'on',
    start: new Date(now - 3.5 * 86_400_000).toISOString(),
    end: new Date(now + 3.5 * 86_400_000).toISOString(),
    fromPercent: 5,
    toPercent: 100,
  }
  const rule = rolloutRule(rollout, BENCH_RULE)
  const { expr, problems } = compileRule(rule, { segments: new Map([['bench-testers', BENCH_SEGMENT]]) })
  if (problems.length > 0) throw new Error(JSON.stringify(problems))
  const ours = perEvaluation((ctx) => runRule(expr, ctx, 'bench/rule', { timestamp: Math.floor(now / 1000) }), 200_000)
  row(
    'One rule with a progressive rollout in front (100 steps, half-way), in-process, varied contexts',
    `flagd's engine ${ours.toFixed(2)} µs per evaluation`,
    '≤ 2 µs',
    ours <= 2,
    { oursUs: ours },
  )
}

/** Creates the segment, the targeted flag and 199 more like it under `rules/`. */
async function seed(c: TargetingContext): Promise<void> {
  const put = await fetch(`${c.url}/api/segments/bench-testers`, {
    method: 'PUT',
    headers: c.auth,
    body: JSON.stringify({ rule: BENCH_SEGMENT }),
  })
  if (!put.ok) throw new Error(`segment: ${put.status} ${await put.text()}`)
  for (let i = 0; i < 200; i++) {
    const res = await fetch(`${c.url}/api/flags`, {
      method: 'POST',
      headers: c.auth,
      body: JSON.stringify({
        name: `rules/r${String(i).padStart(3, '0')}`,
        type: 'BOOLEAN',
        variants: { on: true, off: false },
        targeting: BENCH_RULE,
      }),
    })
    if (res.status !== 201) throw new Error(`flag: ${res.status} ${await res.text()}`)
  }
}

/** The OFREP rows with rules. */
export async function targetingScenarios(c: TargetingContext): Promise<void> {
  await seed(c)
  const made = await fetch(`${c.url}/api/tokens`, {
    method: 'POST',
    headers: c.auth,
    body: JSON.stringify({
      name: 'bench-rules',
      permissions: ['flag:evaluate'],
      // 800 static flags (16 of the 20 groups) and the 200 with rules: 1,000 in all
      flagPrefixes: [...Array.from({ length: 16 }, (_, g) => `app/g${String(g).padStart(2, '0')}/`), 'rules/'],
    }),
  })
  const token = ((await made.json()) as { token: string }).token
  await c.scenario(
    'POST /ofrep/v1/evaluate/flags/{key}, a rule of 5 conditions, a segment and a split, 32 connections',
    '/ofrep/v1/evaluate/flags/rules/r007',
    { 'x-api-key': token },
    0.5,
    ' (× a bare Bun that reads the body)',
    undefined,
    JSON.stringify({ context: contextOf(42) }),
  )
  // a different context on every request: nothing can be answered from a cache
  const lua = `
counter = 0
request = function()
  counter = counter + 1
  local body = '{"context":{"targetingKey":"user-' .. counter .. '","email":"u' .. counter .. '@mail.test","plan":"free","appVersion":"2.' .. (counter % 4) .. '.0","country":"DE","age":' .. (20 + counter % 60) .. '}}'
  return wrk.format("POST", nil, {["Content-Type"] = "application/json", ["X-API-Key"] = "${token}"}, body)
end
`
  const check = await fetch(`${c.url}/ofrep/v1/evaluate/flags`, {
    method: 'POST',
    headers: { 'x-api-key': token, 'content-type': 'application/json' },
    body: JSON.stringify({ context: contextOf(1) }),
  })
  const count = ((await check.json()) as { flags: unknown[] }).flags.length
  const runs = [0, 1, 2].map(() => wrk({ url: `${c.url}/ofrep/v1/evaluate/flags`, connections: 32, seconds: c.seconds, lua, dir: c.dir }))
  const rates = runs.map((r) => r.rps).sort((a, b) => a - b)
  const median = rates[1] as number
  const errors = runs.reduce((n, r) => n + r.non2xx + r.socketErrors, 0)
  c.row(
    `POST /ofrep/v1/evaluate/flags (bulk, ${count} flags, 200 with rules), a new context every request, 32 connections`,
    `${median.toFixed(0)} requests/s (runs ${rates.map((r) => r.toFixed(0)).join(', ')}); p99 ${runs[1]?.p99Ms.toFixed(1)} ms; ${errors} errors`,
    '≥ 1,000 requests/s',
    median >= 1000 && errors === 0 && count === 1000,
    { rates, errors, count },
  )
}
