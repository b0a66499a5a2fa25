/**
 * Load generation with h2load (nghttp2's native HTTP/2 and HTTP/1.1 generator, Debian's package
 * `nghttp2-client`) for the rows that compare gRPC with HTTP: a gRPC client on Bun (`@grpc/grpc-js`)
 * saturates itself long before the daemon does and trickles calls one per wakeup, which charges the
 * daemon for the client's slowness. h2load posts a fixed body, so a gRPC call is its body file
 * (a length-prefixed message) and its headers; its per-request log gives the latencies.
 */

import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ensureTool } from './wrk.ts'

/** Makes sure `h2load` is on the PATH. */
export const ensureH2load = () => ensureTool('h2load', 'nghttp2-client')

/** One run. */
export interface H2loadOptions {
  url: string
  /** HTTP/1.1 with `connections` keep-alive connections, or HTTP/2 with `streams` per connection. */
  http1: boolean
  connections: number
  streams: number
  seconds: number
  headers: Record<string, string>
  body: Uint8Array
  dir: string
}

/** What one run measured: requests, the ones answered 2xx, response body octets, p99 (ms). */
export interface H2loadResult {
  requests: number
  succeeded: number
  dataBytes: number
  p99Ms: number
}

let runs = 0

/** Runs h2load once with one client thread (one core, as wrk runs); the bench's own loop goes on meanwhile. */
export async function h2load(o: H2loadOptions): Promise<H2loadResult> {
  const n = ++runs
  const bodyFile = join(o.dir, `h2load-body-${n}`)
  const logFile = join(o.dir, `h2load-log-${n}.tsv`)
  writeFileSync(bodyFile, o.body)
  const args = ['h2load', '-t1', `-c${o.connections}`, `-m${o.streams}`, `-D${o.seconds}`, '-d', bodyFile, '--log-file', logFile]
  if (o.http1) args.push('--h1')
  for (const [k, v] of Object.entries(o.headers)) args.push('-H', `${k}: ${v}`)
  args.push(o.url)
  const run = Bun.spawn(args, { stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
  const done = /requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded/.exec(out)
  if (code !== 0 || !done) throw new Error(`h2load failed: ${err}${out}`)
  // the log: start (µs since the epoch), status, µs until the end of the response
  const latencies = readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => Number(line.split('\t')[2]) / 1000)
    .sort((a, b) => a - b)
  return {
    requests: Number(done[1]),
    succeeded: Number(done[2]),
    dataBytes: Number(/, \S+ \((\d+)\) data/.exec(out)?.[1] ?? Number.NaN),
    p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? Number.NaN,
  }
}
