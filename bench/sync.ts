/**
 * flagd's sync protocol (contract §20) in `bun run bench`: one change reaching 500 open `SyncFlags`
 * streams (each its own connection, as 500 in-process providers would be; the spread of arrival
 * times over three changes), the memory each open stream costs the daemon, and the time to answer
 * `FetchAllFlags` with 10,000 flags (the first answer after a change builds the document; later ones
 * are served from it).
 */

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

/** 500 streams, one change, three times: when the last stream had it, and the spread of arrivals. */
export async function syncStreamsRow(c: SyncBenchContext): Promise<void> {
  const secret = await token(c, 'bench-sync', { flagPrefixes: ['app/g07/'] })
  await Bun.sleep(1500)
  const before = c.rssMb(c.pid)
  const clients = Array.from({ length: STREAMS }, () => client(c.syncPort))
  let round: number[] = []
  let documentBytes = 0
  let received = 0
  const streams = clients.map((cl) => {
    const s = cl.syncFlags({ providerId: '', selector: '' }, bearer(secret))
    s.on('data', (m: { flagConfiguration: string }) => {
      received++
      documentBytes = m.flagConfiguration.length
      round.push(performance.now())
    })
    s.on('error', () => {})
    return s
  })
  while (received < STREAMS) await Bun.sleep(10)
  await Bun.sleep(500)
  const withStreams = c.rssMb(c.pid)
  const fanOut = async () => {
    const text = await (await fetch(`${c.url}/metrics`)).text()
    const sum = Number(/^flagd_sync_fanout_seconds_sum (\S+)$/m.exec(text)?.[1] ?? 0)
    const count = Number(/^flagd_sync_fanout_seconds_count (\S+)$/m.exec(text)?.[1] ?? 0)
    return { sum, count }
  }
  const fanOutBefore = await fanOut()
  const rounds: { last: number; first: number; median: number }[] = []
  for (let i = 0; i < 3; i++) {
    round = []
    const started = performance.now()
    const put = await fetch(`${c.url}/api/flags/app/g07/f507`, {
      method: 'PUT',
      headers: c.auth,
      body: JSON.stringify({ value: 2000 + i }),
    })
    if (put.status !== 200) throw new Error(`change failed: ${put.status}`)
    const deadline = started + 10_000
    while (round.length < STREAMS && performance.now() < deadline) await Bun.sleep(1)
    const times = round.map((t) => t - started).sort((a, b) => a - b)
    rounds.push({
      first: times[0] ?? Number.NaN,
      median: spread(times).median,
      last: times.length < STREAMS ? Number.NaN : (times.at(-1) as number),
    })
    await Bun.sleep(300)
  }
  const fanOutAfter = await fanOut()
  const daemonMs = ((fanOutAfter.sum - fanOutBefore.sum) * 1000) / Math.max(1, fanOutAfter.count - fanOutBefore.count)
  for (const s of streams) s.cancel()
  for (const cl of clients) cl.close()
  // what the streams held: RSS with them open against RSS once they are closed (the load scenarios
  // before this one leave garbage that a collection may return at any time, so "before" is no baseline)
  await Bun.sleep(1500)
  const after = c.rssMb(c.pid)
  // an upper bound: the growth over the lower of the two RSS readings without streams
  const perStreamKb = (Math.max(0, withStreams - Math.min(before, after)) * 1024) / STREAMS
  const worst = Math.max(...rounds.map((r) => r.last))
  c.row(
    `${STREAMS} open SyncFlags streams (one connection each), one change`,
    `the daemon wrote each change to all ${STREAMS} streams in ${daemonMs.toFixed(1)} ms (mean, flagd_sync_fanout_seconds); every stream had the new document ${rounds.map((r) => `${r.last.toFixed(0)} ms`).join(', ')} after the PUT was sent (first ${rounds.map((r) => r.first.toFixed(0)).join('/')} ms, median ${rounds.map((r) => r.median.toFixed(0)).join('/')} ms; a ${(documentBytes / 1024).toFixed(1)} KiB document of 50 flags); RSS ${before.toFixed(0)} MB before, ${withStreams.toFixed(0)} MB with the streams open, ${after.toFixed(0)} MB once closed: at most ${perStreamKb.toFixed(0)} KiB per stream`,
    'all within 100 ms; memory per stream reported',
    worst < 100,
    { rounds, before, withStreams, after, perStreamKb, documentBytes, daemonMs },
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
