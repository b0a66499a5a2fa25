// Preloaded into a bench daemon by `forcedGcEnv` (bench/forced-gc.ts), never part of the binary:
// each SIGUSR2 runs a full garbage collection, then appends a line to BENCH_GC_FILE with the
// JavaScript heap's size and the memory its objects hold outside it (bytes).

import { heapStats } from 'bun:jsc'
import { appendFileSync } from 'node:fs'

process.on('SIGUSR2', () => {
  Bun.gc(true)
  const stats = heapStats()
  appendFileSync(process.env.BENCH_GC_FILE, `${stats.heapSize} ${stats.extraMemorySize}\n`)
})
