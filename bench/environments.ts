/**
 * Environments at their limit in `bun run bench` (docs/environments.md): one daemon of the compiled
 * binary with 10,000 flags, first in its one environment, then with 19 more (each made with `PUT
 * /api/environments/{name}`, copying every state). Reported: the start to the first `200` and the
 * idle RSS with 20 environments against one, the state file's growth, making one environment, and a
 * promotion of 10,000 changed flags (its dry run too).
 */

import { mkdtempSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { flagDocument, freePort, loginHeaders, type Row, startBinary } from './fixture.ts'

const FLAGS = 10_000
const ENVIRONMENTS = 20

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024

/** Starts the binary on `dir` with one environment, production, and room for a large import. */
const start = (binary: string, dir: string, port: number) =>
  startBinary(binary, dir, port, { FLAGD_ENVIRONMENT: 'production', FLAGD_LIMITS_IMPORT_BYTES: String(64 * 2 ** 20) })

async function stop(proc: Subprocess): Promise<void> {
  proc.kill('SIGTERM')
  await proc.exited
}

/** Idle RSS: a second after the last request, as a running daemon sits between them. */
async function idleRss(pid: number): Promise<number> {
  await Bun.sleep(1000)
  return rssMb(pid)
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const began = performance.now()
  const value = await work()
  return { ms: performance.now() - began, value }
}

/** The rows of the environments scenario. */
export async function environmentRows(binary: string, work: string, row: Row): Promise<void> {
  const dir = mkdtempSync(join(work, 'environments-'))
  const port = freePort()
  const stateFile = join(dir, 'data', 'flagd.json')
  let daemon = await start(binary, dir, port)
  try {
    let auth = await loginHeaders(daemon.url, 'admin', 'bench-password')
    const put = (path: string, body: unknown, method = 'PUT') =>
      fetch(`${daemon.url}${path}`, { method, headers: auth, body: JSON.stringify(body) }).then(async (r) => {
        if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`)
        return r.json()
      })
    await put('/api/migrations', flagDocument(FLAGS, 'app'))
    const oneFile = statSync(stateFile).size
    await stop(daemon.proc)
    daemon = await start(binary, dir, port)
    const oneStart = daemon.startMs
    const oneRss = await idleRss(daemon.proc.pid as number)
    auth = await loginHeaders(daemon.url, 'admin', 'bench-password')

    const making: number[] = []
    for (let i = 1; i < ENVIRONMENTS; i++)
      making.push((await timed(() => put(`/api/environments/env${String(i).padStart(2, '0')}`, {}))).ms)
    // env01 gets 10,000 changed values, then goes to production in one promotion
    const changed = flagDocument(FLAGS, 'app')
    for (const f of Object.values(changed.flags) as { value: number }[]) f.value += 1
    await put('/api/migrations?environment=env01', changed)
    const dry = await timed(() => put('/api/environments/production/promote', { from: 'env01', dryRun: true }, 'POST'))
    const promoted = await timed(() => put('/api/environments/production/promote', { from: 'env01' }, 'POST'))
    const count = (promoted.value as { changes: unknown[] }).changes.length
    const manyFile = statSync(stateFile).size
    await stop(daemon.proc)
    daemon = await start(binary, dir, port)
    const manyRss = await idleRss(daemon.proc.pid as number)
    const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1)
    const mean = making.reduce((a, b) => a + b, 0) / making.length

    row(
      `start with ${ENVIRONMENTS} environments × ${FLAGS.toLocaleString('en')} flags, to the first 200`,
      `${daemon.startMs.toFixed(0)} ms (${oneStart.toFixed(0)} ms in one environment)`,
      '< 1 s',
      daemon.startMs < 1000,
      { startMs: daemon.startMs, oneEnvironmentStartMs: oneStart },
    )
    row(
      `idle RSS, ${ENVIRONMENTS} environments × ${FLAGS.toLocaleString('en')} flags`,
      `${manyRss.toFixed(0)} MB (${oneRss.toFixed(0)} MB in one environment: +${(manyRss - oneRss).toFixed(0)} MB)`,
      'stated',
      true,
      { rssMb: manyRss, oneEnvironmentRssMb: oneRss },
    )
    row(
      `state file, ${ENVIRONMENTS} environments × ${FLAGS.toLocaleString('en')} flags`,
      `${mb(manyFile)} MiB (${mb(oneFile)} MiB in one environment)`,
      'grows by the states only',
      true,
      { bytes: manyFile, oneEnvironmentBytes: oneFile },
    )
    row(
      `making one environment (copies ${FLAGS.toLocaleString('en')} states, one commit)`,
      `${mean.toFixed(0)} ms on average of ${making.length}`,
      'stated',
      true,
      { ms: making },
    )
    row(
      `promotion of ${count.toLocaleString('en')} changed flags (one commit), ${ENVIRONMENTS} environments`,
      `${promoted.ms.toFixed(0)} ms (its dry run ${dry.ms.toFixed(0)} ms)`,
      '< 2 s',
      promoted.ms < 2000 && count === FLAGS,
      { ms: promoted.ms, dryRunMs: dry.ms, changes: count },
    )
  } finally {
    await stop(daemon.proc)
  }
}
