/**
 * The guard-check rows of `bun run bench` (docs/performance.md#guard-checks): in process, over a
 * real app on a temp data directory, answered by `http.handle` so only flagd's own work is timed.
 * (1) One reading of a guard of three checks (error-rate, mean, threshold) over counts of two
 * variants: what the watcher does for a flag after each report, median of 2,000. (2) OFREP single on
 * a flag whose rollout has that guard against its twin whose rollout has none, in alternating
 * rounds of 500 requests: the guard must cost the hot path nothing. `bun bench/guard-checks.ts`
 * prints the rows alone.
 */

import { systemPrincipal } from '../src/domain/principal.ts'
import { OtlpRequest } from '../src/http/otlp-metrics.ts'
import { inProcessApp, type Row } from './fixture.ts'

const attr = (key: string, value: string) => ({ key, value: { stringValue: value } })
const GUARD = {
  checks: [
    { kind: 'error-rate', errors: 'app.errors', total: 'app.requests' },
    { kind: 'mean', histogram: 'app.latency' },
    { kind: 'threshold', metric: 'app.errors', max: 1_000_000, windowSeconds: 600 },
  ],
}

/** A report of the three metrics for both variants of `flag` (delta points). */
function report(flag: string): Uint8Array {
  const points = (make: (variant: string) => Record<string, unknown>) =>
    ['true', 'false'].map((variant) => ({
      attributes: [attr('feature_flag.key', flag), attr('feature_flag.result.variant', variant)],
      ...make(variant),
    }))
  const sum = (name: string, value: number) => ({
    name,
    sum: { aggregationTemporality: 1, isMonotonic: true, dataPoints: points(() => ({ asInt: value })) },
  })
  const histogram = {
    name: 'app.latency',
    histogram: {
      aggregationTemporality: 1,
      dataPoints: points(() => ({ count: 100, sum: 20, explicitBounds: [0.1, 0.5, 1], bucketCounts: [40, 50, 10, 0] })),
    },
  }
  return OtlpRequest.encode(
    OtlpRequest.fromObject({
      resourceMetrics: [{ scopeMetrics: [{ metrics: [sum('app.requests', 100), sum('app.errors', 1), histogram] }] }],
    }),
  ).finish()
}

/** Both rows (see module comment). */
export async function guardCheckRows(row: Row): Promise<void> {
  const { app, close } = await inProcessApp('flagd-bench-guard-checks-')
  try {
    const cli = { principal: systemPrincipal('cli'), requestId: 'bench' }
    const rollout = (guarded: boolean) => ({
      variant: 'true',
      start: new Date(Date.now() - 3_600_000).toISOString(),
      end: new Date(Date.now() + 86_400_000).toISOString(),
      fromPercent: 10,
      toPercent: 90,
      ...(guarded ? { guard: GUARD } : {}),
    })
    for (const [name, guarded] of [
      ['shop/guarded', true],
      ['shop/plain', false],
    ] as const)
      await app.services.flags.create(cli, { name, type: 'BOOLEAN', value: false, rollout: rollout(guarded) })
    const token = (await app.services.apiTokens.create(cli, { name: 'bench', permissions: ['flag:evaluate'] })).token
    const post = async (path: string, body: Uint8Array | string, type: string) => {
      const res = await app.http.handle(
        new Request(`http://localhost${path}`, { method: 'POST', headers: { 'x-api-key': token, 'content-type': type }, body }),
      )
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`)
      await res.arrayBuffer()
    }
    // a day of reports' worth of steps for the guard to read
    for (let i = 0; i < 50; i++) await post('/v1/metrics', report('shop/guarded'), 'application/x-protobuf')

    // (1) one reading of the guard, as the watcher makes it after a report
    const reader = systemPrincipal('cli')
    for (let i = 0; i < 200; i++) app.services.guards.report(reader, 'shop/guarded')
    const times: number[] = []
    for (let i = 0; i < 2000; i++) {
      const t0 = performance.now()
      app.services.guards.report(reader, 'shop/guarded')
      times.push(performance.now() - t0)
    }
    times.sort((a, b) => a - b)
    const median = times[1000] as number
    row(
      'a guard of 3 checks read (error-rate, mean, threshold; 2 variants, in process)',
      `median ${(median * 1000).toFixed(0)} µs (p99 ${((times[1980] as number) * 1000).toFixed(0)} µs) over 2,000`,
      '< 1 ms',
      median < 1,
      { medianMs: median },
    )

    // (2) OFREP single on the guarded flag against its unguarded twin, alternating rounds
    const body = JSON.stringify({ context: { targetingKey: 'user-42' } })
    const round = async (flag: string) => {
      const t0 = performance.now()
      for (let i = 0; i < 500; i++) await post(`/ofrep/v1/evaluate/flags/${flag}`, body, 'application/json')
      return performance.now() - t0
    }
    for (let i = 0; i < 4; i++) await round(i % 2 ? 'shop/guarded' : 'shop/plain')
    let guardedMs = 0
    let plainMs = 0
    for (let i = 0; i < 20; i++) {
      if (i % 2) {
        guardedMs += await round('shop/guarded')
        plainMs += await round('shop/plain')
      } else {
        plainMs += await round('shop/plain')
        guardedMs += await round('shop/guarded')
      }
    }
    const ratio = plainMs / guardedMs
    row(
      'OFREP single on a flag with a guarded rollout against its unguarded twin (in process, 10,000 each)',
      `${ratio.toFixed(3)} × the unguarded throughput (${((guardedMs * 1000) / 10_000).toFixed(0)} µs against ${((plainMs * 1000) / 10_000).toFixed(0)} µs a request)`,
      '≥ 0.97 ×',
      ratio >= 0.97,
      { guardedMs, plainMs, ratio },
    )
  } finally {
    await close()
  }
}

if (import.meta.main) {
  const rows: string[] = []
  await guardCheckRows((scenario, result, goal, met) => rows.push(`| ${scenario} | ${result} | ${goal} | ${met ? 'yes' : '**no**'} |`))
  console.log(`| scenario | result | goal | met |\n|---|---|---|---|\n${rows.join('\n')}`)
}
