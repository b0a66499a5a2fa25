/**
 * The guard-metrics rows of `bun run bench` (docs/performance.md#the-metrics-guards-read): in
 * process, over a real app on a temp data directory with one guarded flag (written through the
 * store), answered by `http.handle` so only flagd's own work is timed. (1) An OTLP/HTTP protobuf
 * request of 1,000 points that feed the guard, decoded and kept, median of 30 (after a warm-up).
 * (2) 100,000 distinct cumulative series sent in 100 requests of 1,000: RSS after a full GC before
 * and after, which must stay flat (memory is bounded by guards × variants, whatever is sent).
 * `bun bench/guard-metrics.ts` prints the rows alone.
 */

import type { FlagRow } from '../src/domain/flag-row.ts'
import { systemPrincipal } from '../src/domain/principal.ts'
import { OtlpRequest } from '../src/http/otlp-metrics.ts'
import { inProcessApp, type Row } from './fixture.ts'

const FLAG = 'shop/checkout'
const attr = (key: string, value: string) => ({ key, value: { stringValue: value } })
const rssMb = () => process.memoryUsage().rss / 2 ** 20

/** A request of `n` cumulative points of the guarded counter, series `from`…`from + n - 1`. */
function request(from: number, n: number, value: number): Uint8Array {
  const dataPoints = Array.from({ length: n }, (_, i) => ({
    attributes: [
      attr('feature_flag.key', FLAG),
      attr('feature_flag.result.variant', i % 2 ? 'true' : 'false'),
      attr('pod', `pod-${from + i}`),
    ],
    startTimeUnixNano: String(BigInt(Date.now()) * 1_000_000n),
    asInt: value,
  }))
  return OtlpRequest.encode(
    OtlpRequest.fromObject({
      resourceMetrics: [
        {
          resource: { attributes: [attr('service.name', 'bench')] },
          scopeMetrics: [{ metrics: [{ name: 'app.errors', sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints } }] }],
        },
      ],
    }),
  ).finish()
}

/** Both rows (see module comment). */
export async function guardMetricsRows(row: Row): Promise<void> {
  const { app, config, close } = await inProcessApp('flagd-bench-guard-')
  try {
    const cli = { principal: systemPrincipal('cli'), requestId: 'bench' }
    await app.services.flags.create(cli, { name: FLAG, type: 'BOOLEAN', value: false })
    await app.store.transact({ ...cli, source: 'cli', environment: config.environment }, (tx) => {
      const row = tx.read.flags.get(FLAG) as FlagRow
      const rollout = {
        variant: 'true',
        start: new Date(Date.now() - 3_600_000).toISOString(),
        end: new Date(Date.now() + 86_400_000).toISOString(),
        fromPercent: 10,
        toPercent: 100,
        writtenAt: new Date(Date.now() - 60_000).toISOString(),
        guard: { checks: [{ kind: 'error-rate', errors: 'app.errors', total: 'app.requests' }] },
      }
      const state = { ...row.states[config.environment], rollout }
      tx.put('flags', { ...row, revision: row.revision + 1, states: { ...row.states, [config.environment]: state } } as FlagRow)
    })
    const token = (await app.services.apiTokens.create(cli, { name: 'bench', permissions: ['flag:evaluate'] })).token
    const send = async (body: Uint8Array) => {
      const res = await app.http.handle(
        new Request('http://localhost/v1/metrics', {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-protobuf' },
          body,
        }),
      )
      if (res.status !== 200) throw new Error(`OTLP: ${res.status} ${await res.text()}`)
      await res.arrayBuffer()
    }

    // (1) one request of 1,000 points feeding the guard: the same series, rising
    for (let i = 0; i < 10; i++) await send(request(0, 1000, i + 1))
    const times: number[] = []
    for (let i = 0; i < 30; i++) {
      const body = request(0, 1000, 100 + i)
      const t0 = performance.now()
      await send(body)
      times.push(performance.now() - t0)
    }
    times.sort((a, b) => a - b)
    const median = times[15] as number
    row(
      'OTLP request of 1,000 points that feed a guard (protobuf, decoded and kept, in process)',
      `median ${median.toFixed(1)} ms (p90 ${(times[27] as number).toFixed(1)} ms) over 30`,
      '< 50 ms',
      median < 50,
      { medianMs: median, times },
    )

    // (2) 100,000 distinct series: RSS after a full GC, before and after
    Bun.gc(true)
    const before = rssMb()
    const samples: number[] = []
    for (let batch = 0; batch < 100; batch++) {
      await send(request(1_000_000 + batch * 1000, 1000, 1))
      if (batch % 25 === 24) {
        Bun.gc(true)
        samples.push(rssMb())
      }
    }
    await app.services.guardMetrics.flush()
    Bun.gc(true)
    const after = rssMb()
    const stored = app.services.guardMetrics.stored()
    // the series table is full (8 MiB) after the first 25,000: from there on RSS must not follow the series
    const growth = after - (samples[0] as number)
    row(
      '100,000 distinct series sent to a guarded counter (100 requests of 1,000)',
      `RSS ${before.toFixed(0)} MiB before, every 25,000: ${samples.map((s) => s.toFixed(0)).join(', ')}, after ${after.toFixed(0)} MiB (+${growth.toFixed(0)} from 25,000 to 100,000); ${stored.series} series remembered in ${(stored.bytes / 2 ** 20).toFixed(1)} MiB, ${stored.cells} cells`,
      'flat once the 8 MiB series table is full (≤ +16 MiB from 25,000 to 100,000)',
      growth <= 16,
      { beforeMb: before, afterMb: after, samples, stored },
    )
  } finally {
    await close()
  }
}

if (import.meta.main) {
  const rows: string[] = []
  await guardMetricsRows((scenario, result, goal, met) => rows.push(`| ${scenario} | ${result} | ${goal} | ${met ? 'yes' : '**no**'} |`))
  console.log(`| scenario | result | goal | met |\n|---|---|---|---|\n${rows.join('\n')}`)
}
