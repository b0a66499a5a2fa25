/**
 * What a write costs by store size (docs/performance.md#writes), for one or more builds in one run:
 * `bun bench/writes.ts <binary> [<binary>…]` (the first is this build; a second, say the build
 * before, is measured right after it on the same machine), or `writeRows(binary, work, row)` from
 * `bun run bench`. For each build:
 * - one `PUT` with no other load at 1,000 and at 50,000 flags (median and p99 of sequential PUTs);
 * - at 10,000 flags in 20 environments: one `PUT`, the bytes the daemon writes per `PUT` (its
 *   `wchar` in /proc), 8 writers (p99) and 16 writers for 10 s (bytes written).
 * Each daemon is seeded, then restarted, so what is measured is writes, not the seeding. Its RSS
 * holding its flags is reported beside. BENCH_WRITES_POSTGRES=1 runs every daemon on a fresh
 * database of one PostgreSQL server (Debian's binaries, as the tests start it) instead of its file.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { findPostgresBin, type PostgresServer, startPostgres } from '../test/helpers/postgres.ts'
import { flagDocument, freePort, loginHeaders, type Row, startBinary } from './fixture.ts'
import { ensureWrk, spread, wrk } from './wrk.ts'

const BIG = { FLAGD_LIMITS_IMPORT_BYTES: String(256 * 2 ** 20), FLAGD_LIMITS_MAX_FLAGS: '100000' }
const ENVIRONMENTS = 20

const procValue = (pid: number, file: string, re: RegExp) => Number(re.exec(readFileSync(`/proc/${pid}/${file}`, 'utf8'))?.[1] ?? 0)
const rssMb = (pid: number) => procValue(pid, 'status', /VmRSS:\s+(\d+)/) / 1024
const wchar = (pid: number) => procValue(pid, 'io', /wchar:\s+(\d+)/)

let postgres: PostgresServer | undefined

/** One running build with `flags` flags (and `environments` environments), logged in. */
async function daemonWith(binary: string, work: string, flags: number, environments = 1) {
  const dir = mkdtempSync(join(work, 'writes-'))
  const port = freePort()
  const database: Record<string, string> = postgres ? { FLAGD_STORAGE_POSTGRES_URL: await postgres.freshDatabase() } : {}
  const env = { ...BIG, FLAGD_ENVIRONMENT: 'env00', ...database }
  let daemon = await startBinary(binary, dir, port, env)
  let auth = await loginHeaders(daemon.url, 'admin', 'bench-password')
  const call = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${daemon.url}${path}`, { method, headers: auth, body: JSON.stringify(body) })
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`)
    await res.arrayBuffer()
  }
  await call('PUT', '/api/migrations', flagDocument(flags, 'app'))
  for (let i = 1; i < environments; i++) await call('PUT', `/api/environments/env${String(i).padStart(2, '0')}`, {})
  // measured from a fresh start: seeding's own cost (its checkpoint, its garbage) is not the writes'
  daemon.proc.kill('SIGTERM')
  await daemon.proc.exited
  daemon = await startBinary(binary, dir, port, env)
  auth = await loginHeaders(daemon.url, 'admin', 'bench-password')
  const pid = daemon.proc.pid as number
  return {
    ...daemon,
    pid,
    auth,
    call,
    async stop() {
      daemon.proc.kill('SIGTERM')
      await daemon.proc.exited
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Sequential PUTs of new values to `count` flags of the daemon; answers their latencies (ms) and bytes written each. */
async function sequentialPuts(d: Awaited<ReturnType<typeof daemonWith>>, flags: number, count: number, environments = 1) {
  const times: number[] = []
  const before = wchar(d.pid)
  for (let n = 0; n < count; n++) {
    const i = (n * 7919) % flags
    const env = environments > 1 ? `?environment=env${String(n % environments).padStart(2, '0')}` : ''
    const began = performance.now()
    await d.call('PUT', `/api/flags/app/g${String(i % 20).padStart(2, '0')}/f${i}${env}`, { value: 1_000_000 + n })
    times.push(performance.now() - began)
  }
  const sorted = [...times].sort((a, b) => a - b)
  return {
    median: spread(times).median,
    p99: sorted[Math.floor(sorted.length * 0.99)] ?? Number.NaN,
    bytesPerPut: (wchar(d.pid) - before) / count,
  }
}

/** wrk's script: writers PUTting new values to 10,000 flags across 20 environments. */
function writersLua(token: string): string {
  return `wrk.headers["Authorization"] = "${token}"
wrk.headers["Content-Type"] = "application/json"
local n = 0
request = function()
  n = n + 1
  local i = (n * 7919) % 10000
  return wrk.format("PUT", string.format("/api/flags/app/g%02d/f%d?environment=env%02d", i % 20, i, n % ${ENVIRONMENTS}), nil, '{"value":' .. n .. '}')
end
`
}

const ms = (n: number) => `${n.toFixed(1)} ms`
const mb = (n: number) => `${(n / 2 ** 20).toFixed(n < 2 ** 20 ? 3 : 1)} MB`

/** The rows for `binary` (named `label` in them). */
export async function writeRows(binary: string, work: string, row: Row, label = ''): Promise<void> {
  ensureWrk()
  const tag = label ? ` [${label}]` : ''
  for (const flags of [1_000, 50_000]) {
    const d = await daemonWith(binary, work, flags)
    try {
      const r = await sequentialPuts(d, flags, 200)
      const goal = flags === 50_000 ? '≤ 5 ms' : 'reported'
      row(
        `one PUT, no load, ${flags.toLocaleString('en')} flags${tag}`,
        `median ${ms(r.median)}, p99 ${ms(r.p99)}, ${mb(r.bytesPerPut)} written per PUT, RSS ${rssMb(d.pid).toFixed(0)} MB`,
        goal,
        flags !== 50_000 || r.median <= 5,
        { ...r, rssMb: rssMb(d.pid) },
      )
    } finally {
      await d.stop()
    }
  }
  const d = await daemonWith(binary, work, 10_000, ENVIRONMENTS)
  try {
    const one = await sequentialPuts(d, 10_000, 200, ENVIRONMENTS)
    row(
      `one PUT at 10,000 flags × 20 environments${tag}`,
      `median ${ms(one.median)}, p99 ${ms(one.p99)}, ${mb(one.bytesPerPut)} written per PUT, RSS ${rssMb(d.pid).toFixed(0)} MB`,
      '≤ 5 ms, bytes proportional to the change',
      one.median <= 5 && one.bytesPerPut < 64 * 1024,
      one,
    )
    const lua = writersLua(d.auth.authorization as string)
    const eight = wrk({ url: d.url, connections: 8, seconds: 5, dir: work, lua })
    row(
      `durable writes, 8 writers, 10,000 flags × 20 environments${tag}`,
      `p50 ${ms(eight.p50Ms)}, p99 ${ms(eight.p99Ms)}, ${(eight.requests / 5).toFixed(0)} writes/s, errors ${eight.non2xx + eight.socketErrors}`,
      'p99 ≤ 20 ms',
      eight.p99Ms <= 20 && eight.non2xx + eight.socketErrors === 0,
      eight,
    )
    const before = wchar(d.pid)
    const sixteen = wrk({ url: d.url, connections: 16, seconds: 10, dir: work, lua })
    const written = wchar(d.pid) - before
    row(
      `16 writers for 10 s, 10,000 flags × 20 environments${tag}`,
      `${mb(written)} written for ${sixteen.requests} PUTs (${mb(written / Math.max(1, sixteen.requests))} each), p99 ${ms(sixteen.p99Ms)}`,
      'bytes proportional to the change',
      written / Math.max(1, sixteen.requests) < 64 * 1024,
      { ...sixteen, written },
    )
  } finally {
    await d.stop()
  }
}

if (import.meta.main) {
  const binaries = process.argv.slice(2)
  if (binaries.length === 0) throw new Error('usage: bun bench/writes.ts <binary> [<binary>…]')
  const work = mkdtempSync(join(tmpdir(), 'flagd-writes-'))
  if (process.env.BENCH_WRITES_POSTGRES) {
    const bin = findPostgresBin()
    if (!bin) throw new Error('BENCH_WRITES_POSTGRES needs PostgreSQL binaries (Debian: postgresql)')
    postgres = await startPostgres(bin)
  }
  try {
    const row: Row = (scenario, result, goal, met) => console.log(`  ${met ? 'ok  ' : 'MISS'} ${scenario}: ${result} (goal ${goal})`)
    for (const [i, binary] of binaries.entries()) await writeRows(binary, work, row, i === 0 ? 'this build' : binary)
  } finally {
    await postgres?.destroy()
    rmSync(work, { recursive: true, force: true })
  }
}
