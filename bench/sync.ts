/**
 * flagd's sync protocol (docs/openfeature.md) in `bun run bench`: one change reaching 500 open `SyncFlags`
 * streams (each its own connection, as 500 in-process providers would be; seven changes, each
 * reported, with what its time was made of), the memory each open stream costs the daemon, and the
 * time to answer `FetchAllFlags` with 10,000 flags (the first answer after a change builds the
 * document; later ones are served from it). The 500 streams are held by a load generator in a
 * process of its own (`sync-stream-load.mjs`), as wrk holds the HTTP connections elsewhere.
 */

import { basename, join } from 'node:path'
import { credentials, Metadata, makeGenericClientConstructor, type ServiceError } from '@grpc/grpc-js'
import { FLAG_SYNC_SERVICE } from '../src/sync/sync-protocol.ts'
import { token } from './ofrep.ts'
import { spread } from './wrk.ts'

type Row = (scenario: string, result: string, goal: string, met: boolean, raw: unknown) => void

/** What the sync rows need of the bench. */
export interface SyncBenchContext {
  url: string
  pid: number
  auth: Record<string, string>
  syncPort: number
  row: Row
  rssMb: (pid: number) => number
}

const STREAMS = Number(process.env.BENCH_SYNC_STREAMS ?? 500)
const Client = makeGenericClientConstructor(FLAG_SYNC_SERVICE, 'FlagSyncService')
type SyncClient = {
  syncFlags(request: object, metadata: Metadata): { on(event: string, listener: (arg: never) => void): void; cancel(): void }
  fetchAllFlags(request: object, metadata: Metadata, done: (err: ServiceError | null, r: { flagConfiguration: string }) => void): void
  close(): void
}
const client = (port: number) =>
  // a channel of its own per client, as separate processes would have
  new Client(`127.0.0.1:${port}`, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 }) as unknown as SyncClient

const bearer = (secret: string) => {
  const m = new Metadata()
  m.set('authorization', `Bearer ${secret}`)
  return m
}

const ROUNDS = 7
const LOAD_SCRIPT = join(import.meta.dir, 'sync-stream-load.mjs')
const epochMs = () => performance.timeOrigin + performance.now()

/** The load generator (`sync-stream-load.mjs`) in a process of its own, under Node where there is one. */
function startLoad(port: number, secret: string) {
  const runtime = Bun.which('node') ?? process.execPath
  const child = Bun.spawn([runtime, LOAD_SCRIPT, String(port), secret, String(STREAMS)], {
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const reader = child.stdout.getReader()
  const decoder = new TextDecoder()
  let buffered = ''
  const line = async (): Promise<string> => {
    for (;;) {
      const end = buffered.indexOf('\n')
      if (end >= 0) {
        const text = buffered.slice(0, end)
        buffered = buffered.slice(end + 1)
        return text
      }
      const { value, done } = await reader.read()
      if (done) throw new Error('the sync load generator stopped')
      buffered += decoder.decode(value)
    }
  }
  const send = (command: string) => {
    child.stdin.write(`${command}\n`)
    child.stdin.flush()
  }
  return {
    runtime: basename(runtime).replace(/\.exe$/, ''),
    ready: async () => {
      const first = await line()
      if (first !== 'ready') throw new Error(`the sync load generator: ${first}`)
    },
    /** Arrival times (epoch ms) since the last call. */
    arrivals: async (): Promise<number[]> => {
      send('dump')
      const { arrivals, failed } = JSON.parse(await line()) as { arrivals: number[]; failed: number }
      if (failed > 0) throw new Error(`${failed} sync streams failed`)
      return arrivals
    },
    stop: async () => {
      send('quit')
      await child.exited
    },
  }
}

/** The daemon's fan-out metric: seconds spent writing changes out, and how many. */
async function fanOutTotals(url: string) {
  const text = await (await fetch(`${url}/metrics`)).text()
  const sum = Number(/^flagd_sync_fanout_seconds_sum (\S+)$/m.exec(text)?.[1] ?? 0)
  const count = Number(/^flagd_sync_fanout_seconds_count (\S+)$/m.exec(text)?.[1] ?? 0)
  return { sum, count }
}

/**
 * 500 streams, one change at a time, seven times: when the last stream had it (the goal), and what
 * the time was made of: the commit (the PUT answered), the daemon's writing to every stream (its
 * metric), and the arrivals' spread.
 */
export async function syncStreamsRow(c: SyncBenchContext): Promise<void> {
  const secret = await token(c, 'bench-sync', { flagPrefixes: ['app/g07/'] })
  await Bun.sleep(1500)
  const before = c.rssMb(c.pid)
  const load = startLoad(c.syncPort, secret)
  const rounds: { commit: number; fanOut: number; first: number; median: number; last: number }[] = []
  let withStreams = before
  try {
    await load.ready()
    await Bun.sleep(500)
    withStreams = c.rssMb(c.pid)
    for (let i = 0; i < ROUNDS; i++) {
      const fanBefore = await fanOutTotals(c.url)
      const started = epochMs()
      const put = await fetch(`${c.url}/api/flags/app/g07/f507`, {
        method: 'PUT',
        headers: c.auth,
        body: JSON.stringify({ value: 2000 + i }),
      })
      const commit = epochMs() - started
      if (put.status !== 200) throw new Error(`change failed: ${put.status}`)
      const times: number[] = []
      const deadline = started + 10_000
      while (times.length < STREAMS && epochMs() < deadline) {
        await Bun.sleep(200)
        times.push(...(await load.arrivals()).map((t) => t - started))
      }
      times.sort((a, b) => a - b)
      const fanAfter = await fanOutTotals(c.url)
      rounds.push({
        commit,
        fanOut: (fanAfter.sum - fanBefore.sum) * 1000,
        first: times[0] ?? Number.NaN,
        median: spread(times).median,
        last: times.length < STREAMS ? Number.NaN : (times.at(-1) as number),
      })
      await Bun.sleep(300)
    }
  } finally {
    await load.stop()
  }
  // what the streams hold: RSS growth while they opened (the load scenarios before this one leave
  // garbage that a collection may return at any moment, so a collection meanwhile makes it smaller,
  // and RSS once they are closed says more about that garbage than about the streams)
  await Bun.sleep(1500)
  const after = c.rssMb(c.pid)
  const perStreamKb = (Math.max(0, withStreams - before) * 1024) / STREAMS
  const last = spread(rounds.map((r) => r.last))
  const range = (values: number[]) => `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`
  c.row(
    `${STREAMS} open SyncFlags streams (one connection each), one change`,
    `every stream had the change ${last.median.toFixed(0)} ms after the PUT was sent (median of ${ROUNDS} changes; each: ${rounds.map((r) => r.last.toFixed(0)).join(', ')} ms); of which the commit (PUT answered) ${range(rounds.map((r) => r.commit))} ms and the daemon writing it to all ${STREAMS} streams ${range(rounds.map((r) => r.fanOut))} ms (flagd_sync_fanout_seconds); first arrival ${range(rounds.map((r) => r.first))} ms, median ${range(rounds.map((r) => r.median))} ms; clients: one ${load.runtime} process (bench/sync-stream-load.mjs); RSS ${before.toFixed(0)} MB before, ${withStreams.toFixed(0)} MB with the streams open, ${after.toFixed(0)} MB once closed: ${perStreamKb.toFixed(0)} KiB per stream as they opened`,
    `within 100 ms (median of ${ROUNDS} changes; every change reported); memory per stream reported`,
    last.median < 100,
    { rounds, before, withStreams, after, perStreamKb, clients: load.runtime },
  )
}

/** FetchAllFlags of every flag (10,000 and more): the first answer after a change, and the next ones. */
export async function fetchAllRow(c: SyncBenchContext): Promise<void> {
  const secret = await token(c, 'bench-fetch-all')
  const cl = client(c.syncPort)
  const fetchAll = () =>
    new Promise<{ ms: number; flags: number; bytes: number }>((resolve, reject) => {
      const started = performance.now()
      cl.fetchAllFlags({ providerId: '', selector: '' }, bearer(secret), (err, r) => {
        if (err) return reject(err)
        const ms = performance.now() - started
        resolve({
          ms,
          flags: Object.keys((JSON.parse(r.flagConfiguration) as { flags: object }).flags).length,
          bytes: r.flagConfiguration.length,
        })
      })
    })
  // a change first, so the first answer builds the document
  await fetch(`${c.url}/api/flags/app/g07/f507`, { method: 'PUT', headers: c.auth, body: JSON.stringify({ value: 3000 }) })
  const first = await fetchAll()
  const later: number[] = []
  for (let i = 0; i < 5; i++) later.push((await fetchAll()).ms)
  cl.close()
  c.row(
    `FetchAllFlags of ${first.flags.toLocaleString('en')} flags`,
    `${first.ms.toFixed(0)} ms for the first answer after a change, ${spread(later).median.toFixed(0)} ms after (median of 5); ${(first.bytes / 2 ** 20).toFixed(1)} MiB`,
    'reported (goal: < 300 ms, as the export)',
    first.ms < 300,
    { first, later },
  )
}
