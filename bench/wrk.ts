/**
 * Load generation for `bun run bench` with wrk, a native generator: on two cores shared with the
 * server, a load generator running on Node or Bun saturates itself before a bare Bun.serve does,
 * which shrinks both numbers and flatters the slower server's ratio. wrk comes from Debian's
 * package; `ensureWrk()` installs it when it is missing and the bench runs as root (`ensureTool`
 * does the same for h2load, gRPC's load generator in `bench/h2load.ts`).
 */

import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** What one wrk run measured. */
export interface WrkResult {
  rps: number
  p50Ms: number
  p99Ms: number
  requests: number
  non2xx: number
  socketErrors: number
}

/** Makes sure `command` is on the PATH, installing Debian's package `pkg` when possible (as root). */
export function ensureTool(command: string, pkg: string): void {
  if (Bun.which(command)) return
  if (process.getuid?.() === 0 && Bun.which('apt-get')) {
    console.log(`${command} is missing: installing Debian's package "${pkg}"`)
    const install = () => Bun.spawnSync(['apt-get', 'install', '-y', pkg], { stdout: 'ignore', stderr: 'inherit' }).exitCode === 0
    if (install() || (Bun.spawnSync(['apt-get', 'update'], { stdout: 'ignore', stderr: 'inherit' }).exitCode === 0 && install())) return
  }
  throw new Error(
    `bun run bench needs ${command}: install it with \`apt-get install ${pkg}\` (Debian/Ubuntu) or your system's package manager`,
  )
}

/** Makes sure `wrk` is on the PATH. */
export const ensureWrk = () => ensureTool('wrk', 'wrk')

function toMs(text: string): number {
  const m = /^([\d.]+)(us|ms|s)$/.exec(text)
  if (!m) return Number.NaN
  const v = Number(m[1])
  return m[2] === 'us' ? v / 1000 : m[2] === 's' ? v * 1000 : v
}

/** Parses wrk's report (run with --latency). */
export function parseWrk(out: string): WrkResult {
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? Number.NaN)
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)
  return {
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    p50Ms: toMs(/\n\s+50%\s+(\S+)/.exec(out)?.[1] ?? ''),
    p99Ms: toMs(/\n\s+99%\s+(\S+)/.exec(out)?.[1] ?? ''),
    requests: num(/(\d+) requests in/),
    non2xx: /Non-2xx or 3xx responses: (\d+)/.exec(out) ? num(/Non-2xx or 3xx responses: (\d+)/) : 0,
    socketErrors: socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
  }
}

/** Options of one run: one client thread, as the issue asks, so wrk itself uses one core. */
export interface WrkOptions {
  url: string
  connections: number
  seconds: number
  headers?: Record<string, string>
  /** A Lua script body (for writes and POSTs); written to a file in `dir`. */
  lua?: string
  dir: string
}

let scripts = 0

/** Runs wrk once and returns its figures. */
export function wrk(o: WrkOptions): WrkResult {
  const args = ['wrk', '-t1', `-c${o.connections}`, `-d${o.seconds}s`, '--latency']
  for (const [k, v] of Object.entries(o.headers ?? {})) args.push('-H', `${k}: ${v}`)
  if (o.lua) {
    const file = join(o.dir, `script-${++scripts}.lua`)
    writeFileSync(file, o.lua)
    args.push('-s', file)
  }
  args.push(o.url)
  const run = Bun.spawnSync(args, { stdout: 'pipe', stderr: 'pipe' })
  const out = run.stdout.toString()
  if (run.exitCode !== 0 || !/Requests\/sec/.test(out)) throw new Error(`wrk failed: ${run.stderr.toString()}${out}`)
  return parseWrk(out)
}

/** Median and range of numbers. */
export function spread(values: number[]): { median: number; min: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b)
  return { median: sorted[Math.floor(sorted.length / 2)] as number, min: sorted[0] as number, max: sorted[sorted.length - 1] as number }
}

/**
 * One round of wrk against every target at once, each wrk on CPU 1 (the servers run on CPU 0, so they
 * share one core and a slow moment of the machine slows them alike): `bench/contest.ts` and the
 * usage-counting rows.
 */
export async function pinnedRound(
  targets: readonly { url: string; headers: Record<string, string> }[],
  path: string,
  script: string,
  seconds: number,
): Promise<WrkResult[]> {
  const runs = targets.map((t) =>
    Bun.spawn(
      [
        'taskset',
        '-c',
        '1',
        'wrk',
        '-t1',
        '-c16',
        `-d${seconds}s`,
        '-s',
        script,
        ...Object.entries(t.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
        t.url + path,
      ],
      { stdout: 'pipe' },
    ),
  )
  return Promise.all(runs.map(async (p) => parseWrk(await new Response(p.stdout).text())))
}
