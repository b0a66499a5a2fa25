/**
 * A full garbage collection inside a bench daemon, on request (docs/performance.md#memory-that-goes-back):
 * the compiled binary honours `BUN_OPTIONS`, so `--preload` adds `forced-gc-preload.js`, which collects
 * on SIGUSR2 and says so in a file. Nothing of it is in flagd itself. The preload costs both daemons
 * of a comparison alike (about a megabyte: it loads nothing the daemon does not).
 */

import { readFileSync } from 'node:fs'
import { join } from 'node:path'

const PRELOAD = join(import.meta.dir, 'forced-gc-preload.js')

/** The environment that lets `collectedRssMb` collect in a daemon started in `dir`. */
export function forcedGcEnv(dir: string): Record<string, string> {
  return { BUN_OPTIONS: `--preload ${PRELOAD}`, BENCH_GC_FILE: join(dir, 'collections') }
}

/** The reports of the collections the daemon of `dir` made: heap and outside-heap bytes each. */
function collections(dir: string): string[] {
  try {
    return readFileSync(join(dir, 'collections'), 'utf8').split('\n').filter(Boolean)
  } catch {
    return []
  }
}

/** A daemon's memory after full collections, in MB: resident, the JavaScript heap, and what its objects hold outside it. */
export interface Collected {
  rss: number
  heap: number
  outside: number
}

/** Resident memory of `pid` in MB (`VmRSS`). */
export const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024

/**
 * Resident memory of `pid` once it stops falling: the allocators give freed pages back to the
 * system over the seconds after a collection (measured: 130 MB right after one, 100 MB 15 s later).
 * Read every half second until three reads in a row fell by less than 0.5 MB each (at most 60 s).
 */
async function settledRssMb(pid: number): Promise<number> {
  let last = rssMb(pid)
  for (let steady = 0, reads = 0; steady < 3 && reads < 120; reads++) {
    await Bun.sleep(500)
    const now = rssMb(pid)
    steady = last - now < 0.5 ? steady + 1 : 0
    last = now
  }
  return last
}

/**
 * Two full collections in the daemon `pid` started in `dir` with `forcedGcEnv(dir)` (the second
 * frees what the first's finalizers let go), each awaited from its report; then its memory, once
 * resident memory has settled.
 */
export async function collected(pid: number, dir: string): Promise<Collected> {
  let report = ''
  for (let i = 0; i < 2; i++) {
    const before = collections(dir).length
    process.kill(pid, 'SIGUSR2')
    const deadline = Date.now() + 30_000
    for (let now = collections(dir); now.length === before; now = collections(dir)) {
      if (Date.now() > deadline) throw new Error(`the daemon ${pid} did not report its collection`)
      await Bun.sleep(5)
    }
    report = collections(dir).at(-1) ?? ''
  }
  const [heap = 0, outside = 0] = report.split(' ').map(Number)
  return { rss: await settledRssMb(pid), heap: heap / 2 ** 20, outside: outside / 2 ** 20 }
}

/** `m` as the bench prints it. */
export const collectedText = (m: Collected) => `${m.rss.toFixed(1)} MB (heap ${m.heap.toFixed(1)}, outside it ${m.outside.toFixed(1)})`
