/**
 * The prerequisite rows of `bun run bench` (docs/performance.md, docs/api.md#prerequisites): a flag
 * requiring two others (one with a rule, one static) against the same flag requiring nothing.
 * (1) OFREP single through the daemon, wrk on one and then the other, alternated round by round so
 * that the machine's drift hits both; the ratio of their throughputs per round, and the daemon's CPU
 * per request on each. (2) `@openfeature/flagd-core` loaded with the daemon's flagd export (where the
 * prerequisites travel inside the rule, docs/targeting.md#prerequisites-in-flagd-format) evaluating
 * both flags over varied contexts, µs per evaluation. `bun bench/prerequisites.ts` runs them alone on
 * dist/flagd (build it first).
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { FlagdCore } from '@openfeature/flagd-core'
import { type CpuTally, measureCpu, newCpuTally, perRequestText } from './cpu-time.ts'
import { freePort, loginHeaders, type Row, startBinary } from './fixture.ts'
import { token } from './ofrep.ts'
import { contextOf, perEvaluation } from './targeting.ts'
import { spread, type WrkResult, wrk } from './wrk.ts'

/** What the main bench hands over: the daemon, an admin's headers, where wrk keeps its scripts. */
export interface PrerequisiteContext {
  url: string
  pid: number
  auth: Record<string, string>
  row: Row
  dir: string
  seconds: number
  rounds: number
}

/** The prerequisite with a rule: on for three countries. */
export const GATE_RULE = { if: [{ in: [{ var: 'country' }, ['DE', 'NO', 'SE']] }, 'on', 'off'] }

/** The rule of the flag measured: on for adults. */
export const OWN_RULE = { if: [{ '>=': [{ var: 'age' }, 18] }, 'on', 'off'] }

/**
 * The four flags: `prq/with` (a rule of its own) requires `prq/gate` (a rule) and `prq/static`;
 * `prq/without` is the same flag requiring nothing. The flag measured has a rule, so that its answer
 * with its prerequisites held differs from the one without (a static flag answers its value either way).
 */
async function seed(c: Pick<PrerequisiteContext, 'url' | 'auth'>): Promise<void> {
  const flags = [
    { name: 'prq/gate', type: 'BOOLEAN', variants: { on: true, off: false }, targeting: GATE_RULE },
    { name: 'prq/static', type: 'BOOLEAN', value: true },
    {
      name: 'prq/with',
      type: 'BOOLEAN',
      variants: { on: true, off: false },
      targeting: OWN_RULE,
      prerequisites: [
        { flag: 'prq/gate', variants: ['on'] },
        { flag: 'prq/static', variants: ['true'] },
      ],
    },
    { name: 'prq/without', type: 'BOOLEAN', variants: { on: true, off: false }, targeting: OWN_RULE },
  ]
  for (const flag of flags) {
    const res = await fetch(`${c.url}/api/flags`, { method: 'POST', headers: c.auth, body: JSON.stringify(flag) })
    if (res.status !== 201) throw new Error(`${flag.name}: ${res.status} ${await res.text()}`)
  }
}

/** Both rows (see module comment). */
export async function prerequisiteRows(c: PrerequisiteContext): Promise<void> {
  await seed(c)
  const key = await token(c, 'bench-prerequisites', { flagPrefixes: ['prq/'] })
  const body = JSON.stringify({ context: contextOf(42) })
  const headers = { 'x-api-key': key }
  const lua = `wrk.method = "POST"\nwrk.body = '${body}'\nwrk.headers["Content-Type"] = "application/json"\n`
  for (const flag of ['prq/with', 'prq/without']) {
    const res = await fetch(`${c.url}/ofrep/v1/evaluate/flags/${flag}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body,
    })
    const answer = (await res.json()) as { value?: unknown; reason?: string }
    // both must answer their value: every prerequisite holds for this context, so both are evaluated
    if (res.status !== 200 || answer.value !== true || answer.reason !== 'TARGETING_MATCH')
      throw new Error(`${flag}: ${res.status} ${JSON.stringify(answer)}`)
  }
  const tally = { with: newCpuTally(), without: newCpuTally() }
  const load = (flag: 'with' | 'without', seconds: number): WrkResult =>
    measureCpu(c.pid, tally[flag], () =>
      wrk({ url: `${c.url}/ofrep/v1/evaluate/flags/prq/${flag}`, connections: 32, seconds, headers, lua, dir: c.dir }),
    )
  load('without', 1) // warm-up of both, not counted
  load('with', 1)
  Object.assign(tally, { with: newCpuTally(), without: newCpuTally() })
  const loadBefore = loadavg()[0] ?? 0
  const rounds: { with: WrkResult; without: WrkResult; ratio: number }[] = []
  for (let i = 0; i < c.rounds; i++) {
    // which goes first alternates too: neither always follows the other
    const first = i % 2 === 0 ? 'without' : 'with'
    const a = load(first, c.seconds)
    const b = load(first === 'with' ? 'without' : 'with', c.seconds)
    const [withRun, withoutRun] = first === 'with' ? [a, b] : [b, a]
    rounds.push({ with: withRun, without: withoutRun, ratio: withRun.rps / withoutRun.rps })
  }
  const ratio = spread(rounds.map((r) => r.ratio))
  const errors = rounds.reduce((n, r) => n + r.with.non2xx + r.with.socketErrors + r.without.non2xx + r.without.socketErrors, 0)
  const rps = (which: 'with' | 'without') => spread(rounds.map((r) => r[which].rps)).median.toFixed(0)
  // the CPU the daemon spent per request is what the machine's load does not move: its ratio too
  const perRequest = (t: CpuTally) => (t.user + t.kernel) / t.requests
  const cpuRatio = perRequest(tally.without) / perRequest(tally.with)
  c.row(
    'POST /ofrep/v1/evaluate/flags/{key}: a flag with two prerequisites (one with a rule, one static) vs the same flag without, 32 connections',
    `${rps('with')} vs ${rps('without')} req/s = ${ratio.median.toFixed(2)} × (${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)} over ${c.rounds} alternated pairs); CPU per request (own + kernel) with ${perRequestText(tally.with)}, without ${perRequestText(tally.without)} (as a throughput ratio ${cpuRatio.toFixed(2)} ×); errors ${errors}; load average ${loadBefore.toFixed(1)} before, ${loadavg()[0]?.toFixed(1)} after`,
    '≥ 0.9 × without',
    ratio.median >= 0.9 && errors === 0,
    { rounds, ratio, cpu: tally, cpuRatio, loadBefore, loadAfter: loadavg()[0] },
  )

  // flagd-core on the daemon's own flagd export: what an in-process provider evaluates
  const exported = await fetch(`${c.url}/api/migrations/export?format=flagd`, { headers: c.auth })
  if (exported.status !== 200) throw new Error(`export: ${exported.status}`)
  const core = new FlagdCore(undefined, { error() {}, warn() {}, info() {}, debug() {} })
  core.setConfigurations(await exported.text())
  const evaluate = (flag: string) => (ctx: Record<string, unknown>) => core.resolveBooleanEvaluation(flag, false, ctx as never)
  const check = core.resolveBooleanEvaluation('prq/with', false, contextOf(42) as never)
  if (check.value !== true || check.reason !== 'TARGETING_MATCH') throw new Error(`flagd-core on prq/with: ${JSON.stringify(check)}`)
  // alternated too, best of each: a noisy moment of the machine does not decide the comparison
  const best = { 'prq/with': Number.POSITIVE_INFINITY, 'prq/without': Number.POSITIVE_INFINITY }
  for (let r = 0; r < 4; r++)
    for (const flag of r % 2 === 0 ? (['prq/with', 'prq/without'] as const) : (['prq/without', 'prq/with'] as const))
      best[flag] = Math.min(best[flag], perEvaluation(evaluate(flag), 50_000))
  const withUs = best['prq/with']
  const withoutUs = best['prq/without']
  c.row(
    '@openfeature/flagd-core on the flagd export: a flag with two prerequisites (one with a rule, one static), varied contexts',
    `${withUs.toFixed(2)} µs per evaluation (the same flag without: ${withoutUs.toFixed(2)} µs)`,
    '≤ 3 µs',
    withUs <= 3,
    { withUs, withoutUs },
  )
}

if (import.meta.main) {
  const dir = mkdtempSync(join(tmpdir(), 'flagd-bench-prq-'))
  const daemon = await startBinary(join(import.meta.dir, '../dist/flagd'), dir, freePort())
  try {
    const auth = await loginHeaders(daemon.url, 'admin', 'bench-password')
    await prerequisiteRows({
      url: daemon.url,
      pid: daemon.proc.pid,
      auth,
      dir,
      seconds: Number(process.env.BENCH_SECONDS ?? 2),
      rounds: Number(process.env.BENCH_ROUNDS ?? 9),
      row: (scenario, result, goal, met) => console.log(`${met ? 'ok  ' : 'MISS'} ${scenario}: ${result} (goal ${goal})`),
    })
  } finally {
    daemon.proc.kill('SIGTERM')
    await daemon.proc.exited
    rmSync(dir, { recursive: true, force: true })
  }
}
