/**
 * Memory that goes back, in `bun run bench` (docs/performance.md#memory-that-goes-back): the resident
 * memory of the compiled daemon after two full collections (`forced-gc.ts`), in two rows.
 *
 * - Import and back: a 1,000-flag store takes a 10,000-flag import, serves it once (the OFREP bulk
 *   evaluation, the migration export, the flag list), and goes back to its 1,000 flags (a `replace`
 *   import of them deletes the 10,000) and serves those once. Compared with a fresh daemon started
 *   on the same data directory that served the same requests. Goal: within 25 %.
 * - 50,000 flags: a daemon that imported them and served them once, and the same data directory
 *   started afresh and served once. Goal: ≤ 300 MB.
 *
 * `bun bench/memory.ts [binary]` runs the rows alone.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BenchDaemon, flagDocument, freePort, loginHeaders, type Row, startBinary } from './fixture.ts'
import { type Collected, collected, collectedText, forcedGcEnv } from './forced-gc.ts'

const env = (dir: string) => ({ ...forcedGcEnv(dir), FLAGD_LIMITS_IMPORT_BYTES: String(64 * 2 ** 20) })

async function stop(daemon: BenchDaemon): Promise<void> {
  daemon.proc.kill('SIGTERM')
  await daemon.proc.exited
}

/** A logged-in client of `daemon` that fails loudly on any answer but 2xx. */
async function clientOf(daemon: BenchDaemon) {
  const auth = await loginHeaders(daemon.url, 'admin', 'bench-password')
  const send = async (method: string, path: string, body?: unknown, headers: Record<string, string> = auth) => {
    const res = await fetch(`${daemon.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
    const bytes = await res.arrayBuffer()
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${new TextDecoder().decode(bytes).slice(0, 300)}`)
    return bytes
  }
  const made = JSON.parse(
    new TextDecoder().decode(await send('POST', '/api/tokens', { name: `memory-${Date.now()}`, permissions: ['flag:evaluate'] })),
  ) as { token: string }
  return {
    send,
    /** What a daemon in use is asked: every flag evaluated, exported and listed once. */
    async serveOnce() {
      await send(
        'POST',
        '/ofrep/v1/evaluate/flags',
        { context: { targetingKey: 'user-42' } },
        {
          'x-api-key': made.token,
          'content-type': 'application/json',
        },
      )
      await send('GET', '/api/migrations/export')
      await send('GET', '/api/flags')
    },
  }
}

/** Import 10,000 flags into 1,000 and back, against a fresh daemon of the same data directory. */
export async function importAndBackRow(binary: string, work: string, row: Row): Promise<void> {
  const dir = mkdtempSync(join(work, 'memory-back-'))
  const port = freePort()
  let daemon = await startBinary(binary, dir, port, env(dir))
  let seeded: Collected
  let big: Collected
  let back: Collected
  try {
    const client = await clientOf(daemon)
    await client.send('PUT', '/api/migrations', flagDocument(1000, 'app'))
    await client.serveOnce()
    seeded = await collected(daemon.proc.pid, dir)
    await client.send('PUT', '/api/migrations', flagDocument(10_000, 'big'))
    await client.serveOnce()
    big = await collected(daemon.proc.pid, dir)
    await client.send('PUT', '/api/migrations?mode=replace', flagDocument(1000, 'app'))
    await client.serveOnce()
    back = await collected(daemon.proc.pid, dir)
  } finally {
    await stop(daemon)
  }
  daemon = await startBinary(binary, dir, port, env(dir))
  let fresh: Collected
  try {
    await (await clientOf(daemon)).serveOnce()
    fresh = await collected(daemon.proc.pid, dir)
  } finally {
    await stop(daemon)
  }
  const ratio = back.rss / fresh.rss
  row(
    'RSS after importing 10,000 flags into a 1,000-flag store and back, against a fresh daemon holding the same flags (full GC)',
    `${collectedText(back)} vs ${collectedText(fresh)} fresh = ${ratio.toFixed(2)} × (before the import ${collectedText(seeded)}, at 11,000 flags ${collectedText(big)})`,
    'within 25 % (≤ 1.25 ×)',
    ratio <= 1.25,
    { seeded, big, back, fresh, ratio },
  )
}

/** A daemon holding 50,000 flags: after importing them, and started afresh on them; each served once. */
export async function fiftyThousandRow(binary: string, work: string, row: Row): Promise<void> {
  const dir = mkdtempSync(join(work, 'memory-50k-'))
  const port = freePort()
  let daemon = await startBinary(binary, dir, port, env(dir))
  let imported: Collected
  try {
    const client = await clientOf(daemon)
    await client.send('PUT', '/api/migrations', flagDocument(50_000, 'app'))
    await client.serveOnce()
    imported = await collected(daemon.proc.pid, dir)
  } finally {
    await stop(daemon)
  }
  daemon = await startBinary(binary, dir, port, env(dir))
  let restarted: Collected
  try {
    await (await clientOf(daemon)).serveOnce()
    restarted = await collected(daemon.proc.pid, dir)
  } finally {
    await stop(daemon)
  }
  row(
    'RSS holding 50,000 flags, served once (full GC): after importing them / started on them',
    `${collectedText(imported)} / ${collectedText(restarted)}`,
    '≤ 300 MB',
    Math.max(imported.rss, restarted.rss) <= 300,
    { imported, restarted },
  )
}

/** Both rows. */
export async function memoryRows(binary: string, work: string, row: Row): Promise<void> {
  await importAndBackRow(binary, work, row)
  await fiftyThousandRow(binary, work, row)
}

if (import.meta.main) {
  const work = mkdtempSync(join(tmpdir(), 'flagd-memory-'))
  const print: Row = (scenario, result, goal, met) => console.log(`${met ? 'ok  ' : 'MISS'} ${scenario}: ${result} (goal ${goal})`)
  try {
    await memoryRows(process.argv[2] ?? join(import.meta.dir, '../dist/flagd'), work, print)
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}
