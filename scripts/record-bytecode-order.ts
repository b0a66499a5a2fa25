/**
 * `bun run build:order`: records which bytecode the compiled daemon's start-up uses, into
 * `scripts/bytecode-order.txt`, which `bun run build` lays out first in the executable
 * (docs/performance.md#idle-memory-the-bytecode-laid-out-by-use). Starts `binary` (default dist/flagd)
 * on an empty data directory with a first admin and `BUN_BYTECODE_ORDER_OUT`, waits until `/health`
 * answers, stops it with SIGTERM and keeps the profile it wrote on exit. A stale profile still
 * applies (functions it does not know are laid out after it), so re-record when start-up changes.
 */

import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, startBinary } from '../bench/fixture.ts'

/** Where the build reads the start-up profile from. */
export const BYTECODE_ORDER_PATH = join(import.meta.dir, 'bytecode-order.txt')

/** Runs `binary` through a start-up and a stop, and writes the bytecode it used to `out`. */
export async function recordBytecodeOrder(binary: string, out = BYTECODE_ORDER_PATH): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'flagd-order-'))
  const profile = join(dir, 'order.txt')
  try {
    const { proc, url } = await startBinary(binary, dir, freePort(), { BUN_BYTECODE_ORDER_OUT: profile })
    // `/health` answers before the daemon handles SIGTERM: wait for its last start-up line, then one
    // more request, so the stop below is the graceful one that writes the profile
    while (!readFileSync(join(dir, 'flagd.log'), 'utf8').includes(' listening on ')) await Bun.sleep(10)
    await fetch(`${url}/health`)
    proc.kill('SIGTERM')
    const code = await proc.exited
    if (code !== 0 || !existsSync(profile)) throw new Error(`${binary} exited with ${code} and wrote no bytecode order profile`)
    renameSync(profile, out)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.main) {
  const binary = process.argv[2] ?? join(import.meta.dir, '../dist/flagd')
  await recordBytecodeOrder(binary, process.argv[3] ?? BYTECODE_ORDER_PATH)
  console.log(`wrote ${process.argv[3] ?? BYTECODE_ORDER_PATH}`)
}
