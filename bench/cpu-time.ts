/**
 * CPU time per request, split into the server's own code (user) and the kernel's work for it
 * (system: sockets, mostly), from `/proc/<pid>/stat`. A ratio to bare Bun says how far a server is
 * from the limit; this says where the limit is: on a small request the kernel's share is the same
 * for every server that sends the same bytes, so only the user part is a server's own.
 */

import { readFileSync } from 'node:fs'

/** CPU seconds a process has used so far (all its threads). */
export interface CpuTime {
  user: number
  kernel: number
}

// Linux reports these fields in clock ticks of 1/100 s (USER_HZ) on every architecture Bun runs on
const TICKS_PER_SECOND = 100

/** The CPU time of `pid` so far. */
export function cpuTime(pid: number): CpuTime {
  // the command name (field 2) may hold spaces: count the fields after its closing parenthesis
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return { user: Number(fields[11]) / TICKS_PER_SECOND, kernel: Number(fields[12]) / TICKS_PER_SECOND }
}

/** CPU time and requests of one server, summed over the load runs it was measured in. */
export interface CpuTally {
  user: number
  kernel: number
  requests: number
}

/** An empty tally. */
export const newCpuTally = (): CpuTally => ({ user: 0, kernel: 0, requests: 0 })

/** Runs `load` (which answers how many requests it sent) and adds what `pid` spent on them to `tally`. */
export function measureCpu<T extends { requests: number }>(pid: number, tally: CpuTally, load: () => T): T {
  const before = cpuTime(pid)
  const result = load()
  const after = cpuTime(pid)
  tally.user += after.user - before.user
  tally.kernel += after.kernel - before.kernel
  tally.requests += result.requests
  return result
}

/** `user + kernel µs` per request, e.g. `4.7 + 7.5 µs`. */
export function perRequestText(t: CpuTally): string {
  const us = (seconds: number) => ((seconds / t.requests) * 1e6).toFixed(1)
  return `${us(t.user)} + ${us(t.kernel)} µs`
}
