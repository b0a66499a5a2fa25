/**
 * The replica scenarios of `bun run bench` (goals in docs/performance.md): two `dist/flagd` replicas on one PostgreSQL
 * (Debian's server, started in a temp directory by the tests' helper). Authenticated reads on a
 * replica against a bare Bun.serve in the same run (goal: the file store's ratio), durable writes
 * with 16 writers, and the time from a commit on one replica to the event on the other's stream
 * (p50/p99 over 200 changes). Skipped, and said so, without PostgreSQL binaries.
 */

import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { findPostgresBin, startPostgres } from '../test/helpers/postgres.ts'
import { freePort, loginHeaders, type Row, type Scenario, waitFor } from './fixture.ts'
import { spread, wrk } from './wrk.ts'

/** What the main bench hands over. */
export interface ReplicaBenchContext {
  binary: string
  work: string
  seconds: number
  seed: unknown
  scenario: Scenario
  row: Row
  writeLua: (token: string) => string
}

const PASSWORD = 'bench-password'

async function replica(c: ReplicaBenchContext, url: string, port: number): Promise<{ proc: Subprocess; url: string }> {
  const dir = mkdtempSync(join(c.work, 'replica-'))
  const proc = Bun.spawn([c.binary, 'serve', '--port', String(port), '--data-dir', join(dir, 'data')], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', FLAGD_STORAGE_POSTGRES_URL: url, FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: PASSWORD },
    stdout: Bun.file(join(dir, 'flagd.log')),
    stderr: 'inherit',
  })
  const base = `http://127.0.0.1:${port}`
  await waitFor(`${base}/health`, 15_000)
  return { proc, url: base }
}

/** Runs the replica scenarios, or reports them skipped. */
export async function replicaScenarios(c: ReplicaBenchContext): Promise<void> {
  const bin = findPostgresBin()
  if (!bin) {
    c.row('replicas on PostgreSQL', 'skipped: no PostgreSQL binaries (apt-get install postgresql)', 'reported', true, null)
    return
  }
  const server = await startPostgres(bin)
  const replicas: Subprocess[] = []
  try {
    const url = await server.freshDatabase()
    const a = await replica(c, url, freePort())
    replicas.push(a.proc)
    const b = await replica(c, url, freePort())
    replicas.push(b.proc)
    const auth = await loginHeaders(a.url, 'admin', PASSWORD)
    const token = (auth.authorization as string).slice('Bearer '.length)
    const seeded = await fetch(`${a.url}/api/migrations`, { method: 'PUT', headers: auth, body: JSON.stringify(c.seed) })
    if (seeded.status !== 200) throw new Error(`seeding the replicas failed: ${seeded.status}`)
    await Bun.sleep(500)

    await c.scenario(
      'replicas: GET /api/flags/{name} on a replica (PostgreSQL), 32 connections',
      '/api/flags/app/g07/f507',
      { authorization: `Bearer ${token}` },
      0.6,
      " (the file store's goal)",
      5,
      undefined,
      b.url,
    )

    const writes = wrk({ url: a.url, connections: 16, seconds: c.seconds, dir: c.work, lua: c.writeLua(token) })
    const acked = (writes.requests - writes.non2xx) / c.seconds
    c.row(
      'replicas: durable PUT of values on PostgreSQL, 16 writers',
      `${acked.toFixed(0)} acknowledged writes/s, p99 ${writes.p99Ms.toFixed(1)} ms, errors ${writes.non2xx + writes.socketErrors}`,
      'reported (the file store: ≥ 2,000/s)',
      writes.non2xx + writes.socketErrors === 0,
      writes,
    )

    // a commit on A until B's stream has the event
    const stream = await fetch(`${b.url}/api/events`, { headers: { authorization: `Bearer ${token}` } })
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader()
    const lags: number[] = []
    let buffer = ''
    // only this flag changes now, one write at a time: each event carries the next revision
    const first = ((await (await fetch(`${a.url}/api/flags/app/g01/f1`, { headers: auth })).json()) as { revision: number }).revision
    for (let i = 0; i < 200; i++) {
      const marker = new RegExp(`"revision":${first + i + 1}[,}]`)
      const sent = performance.now()
      const put = fetch(`${a.url}/api/flags/app/g01/f1`, { method: 'PUT', headers: auth, body: `{"value":${1_000_000 + i}}` })
      let found: RegExpExecArray | null
      while (!(found = marker.exec(buffer))) buffer += (await reader.read()).value ?? ''
      lags.push(performance.now() - sent)
      buffer = buffer.slice(found.index + found[0].length)
      await put
    }
    await reader.cancel()
    const sorted = [...lags].sort((x, y) => x - y)
    const p99 = sorted[Math.floor(sorted.length * 0.99) - 1] as number
    c.row(
      "replicas: from a PUT on one replica to the event on the other's stream",
      `p50 ${spread(lags).median.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (200 changes, request included)`,
      '< 1 s (goal 100 ms)',
      p99 < 1000,
      lags,
    )
  } finally {
    for (const p of replicas) p.kill('SIGTERM')
    await Promise.all(replicas.map((p) => p.exited))
    await server.destroy()
  }
}
