/**
 * The evaluation scenarios of `bun run bench` (goals in docs/performance.md): a single OFREP evaluation and a bulk
 * evaluation of 100 flags answered `304`, each against a bare Bun.serve in the same run; and 1,000
 * open SSE clients, timed from a committed change until every one of them has its event, with the
 * RSS they cost.
 */

import type { Row, Scenario } from './fixture.ts'

/** What the main bench hands over: the daemon, an admin's headers and the table writers. */
export interface BenchContext {
  url: string
  pid: number
  auth: Record<string, string>
  scenario: Scenario
  row: Row
  rssMb: (pid: number) => number
  /** Only the two throughput ratios, not the SSE row (`BENCH_ONLY=evaluation`). */
  onlyRatios?: boolean
}

const SSE_CLIENTS = Number(process.env.BENCH_SSE_CLIENTS ?? 1000)

/** A new API token with `flag:evaluate` (and `extra`, such as `flagPrefixes`). */
export async function token(c: Pick<BenchContext, 'url' | 'auth'>, name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await fetch(`${c.url}/api/tokens`, {
    method: 'POST',
    headers: c.auth,
    body: JSON.stringify({ name, permissions: ['flag:evaluate'], ...extra }),
  })
  return ((await res.json()) as { token: string }).token
}

/** Opens `n` OFREP streams; resolves with a function that waits for the next event on all of them. */
async function openStreams(url: string, apiToken: string, n: number) {
  const waiting: ((at: number) => void)[] = []
  const controllers: AbortController[] = []
  let opened = 0
  const arrivals: number[] = []
  const open = async () => {
    const abort = new AbortController()
    controllers.push(abort)
    const res = await fetch(`${url}/ofrep/v1/events`, { headers: { 'x-api-key': apiToken }, signal: abort.signal })
    opened++
    const decoder = new TextDecoder()
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        if (decoder.decode(chunk, { stream: true }).includes('refetchEvaluation')) arrivals.push(performance.now())
        if (arrivals.length === n) for (const w of waiting.splice(0)) w(performance.now())
      }
    } catch {
      // aborted at the end
    }
  }
  for (let i = 0; i < n; i++) void open() // each stream runs until close()
  while (opened < n) await Bun.sleep(10)
  return {
    /** Resolves with the time the last stream received its event. */
    allReceived: () => new Promise<number>((resolve) => waiting.push(resolve)),
    arrivals,
    close: () => {
      for (const c of controllers) c.abort()
    },
  }
}

/** Runs the evaluation scenarios. */
export async function ofrepScenarios(c: BenchContext): Promise<void> {
  const app = await token(c, 'bench-app')
  await c.scenario(
    'POST /ofrep/v1/evaluate/flags/{key} (API token), 1,000 flags, 32 connections',
    '/ofrep/v1/evaluate/flags/app/g07/f507',
    { 'x-api-key': app },
    0.6,
    ' (moonshot 0.8 ×)',
    5,
    '{"context":{"targetingKey":"user-42"}}',
  )
  const hundred = await token(c, 'bench-bulk', { flagPrefixes: ['app/g07/', 'app/g08/'] })
  const first = await fetch(`${c.url}/ofrep/v1/evaluate/flags`, {
    method: 'POST',
    headers: { 'x-api-key': hundred, 'content-type': 'application/json' },
    body: '{"context":{"targetingKey":"user-42"}}',
  })
  const count = ((await first.json()) as { flags: unknown[] }).flags.length
  await c.scenario(
    `POST /ofrep/v1/evaluate/flags (bulk, ${count} flags) answered 304, 32 connections`,
    '/ofrep/v1/evaluate/flags',
    { 'x-api-key': hundred, 'if-none-match': first.headers.get('etag') ?? '' },
    0.7,
    '',
    undefined,
    '{"context":{"targetingKey":"user-42"}}',
  )

  if (c.onlyRatios) return
  // 1,000 SSE clients: RSS they cost, and the time from an acknowledged change to the last arrival
  const before = c.rssMb(c.pid)
  const streams = await openStreams(c.url, app, SSE_CLIENTS)
  await Bun.sleep(500)
  const withStreams = c.rssMb(c.pid)
  const latencies: number[] = []
  for (let i = 0; i < 3; i++) {
    const all = streams.allReceived()
    streams.arrivals.length = 0
    const started = performance.now()
    const put = await fetch(`${c.url}/api/flags/app/g07/f507`, {
      method: 'PUT',
      headers: c.auth,
      body: JSON.stringify({ value: 1000 + i }),
    })
    if (put.status !== 200) throw new Error(`change failed: ${put.status}`)
    const timeout = Bun.sleep(10_000).then(() => Number.NaN)
    latencies.push((await Promise.race([all, timeout])) - started)
    await Bun.sleep(200)
  }
  streams.close()
  const worst = Math.max(...latencies)
  const extra = withStreams - before
  c.row(
    `${SSE_CLIENTS} open SSE clients (/ofrep/v1/events), one change`,
    `every client had its event ${latencies.map((l) => `${l.toFixed(0)} ms`).join(', ')} after the PUT was sent (3 changes); RSS ${before.toFixed(0)} MB before the streams opened, ${withStreams.toFixed(0)} MB with them open`,
    'all within 1 s (moonshot 200 ms), < 50 MB extra RSS',
    worst < 1000 && extra < 50,
    { latencies, before, withStreams },
  )
}
