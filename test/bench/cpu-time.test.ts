/**
 * The bench's CPU time per request (bench/cpu-time.ts): read from /proc/<pid>/stat, it must count
 * this process's own work as user time, sum several load runs, and divide by their requests.
 */

import { expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { cpuTime, measureCpu, perRequestText } from '../../bench/cpu-time.ts'

const linux = existsSync(`/proc/${process.pid}/stat`)

test.skipIf(!linux)('busy JavaScript shows as user time of this process, summed over runs with their requests', () => {
  // spins until this process has used `ms` of CPU (not of wall time: a shared machine may give it less)
  const busy = (ms: number) => {
    const until = process.cpuUsage().user + ms * 1000
    let x = 0
    while (process.cpuUsage().user < until) x += Math.sqrt(x + 1)
    return { requests: 1000, x }
  }
  const start = cpuTime(process.pid)
  expect(start.user).toBeGreaterThanOrEqual(0)
  expect(start.kernel).toBeGreaterThanOrEqual(0)
  const tally = { user: 0, kernel: 0, requests: 0 }
  const result = measureCpu(process.pid, tally, () => busy(150))
  measureCpu(process.pid, tally, () => busy(150))
  expect(result.requests).toBe(1000) // the load's own answer is passed through
  expect(tally.requests).toBe(2000)
  // 300 ms of CPU spent: counted in 10 ms ticks, so at least 0.28 s of it shows
  expect(tally.user).toBeGreaterThanOrEqual(0.28)
  expect(tally.user + tally.kernel).toBeLessThan(5)
})

test('the text is user + kernel microseconds per request', () => {
  expect(perRequestText({ user: 0.0047, kernel: 0.0074, requests: 1000 })).toBe('4.7 + 7.4 µs')
})
