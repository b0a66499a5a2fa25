/**
 * Load: mixed reads and writes at 64 connections for LOAD_SECONDS (3 by default, 30 when .ci/run
 * sets TEST_FULL_RELIABILITY) against the daemon as a separate process: zero 5xx, zero socket
 * errors, and memory back near where it started once the load is over (waited for, up to 10 s).
 * Throughput and latency goals live in `bun run bench`, not here.
 */

import { afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { killLiveDaemons, startDaemon } from '../helpers/daemon.ts'
import { tempDir } from '../helpers/test-app.ts'

afterEach(killLiveDaemons) // a failed test leaves no daemon running

const SECONDS = Number(process.env.LOAD_SECONDS ?? (process.env.TEST_FULL_RELIABILITY ? 30 : 3))
const CONNECTIONS = 64
setDefaultTimeout((SECONDS + 60) * 1000)

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024

test(`${SECONDS} s of mixed load at ${CONNECTIONS} connections: no 5xx, no socket errors, memory settles`, async () => {
  const cwd = tempDir()
  const d = await startDaemon(cwd, [], { FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: 'admin-password' })
  try {
    const login = await fetch(`${d.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password: 'admin-password' }),
    })
    const token = ((await login.json()) as { token: string }).token
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` }
    const flags: Record<string, unknown> = {}
    for (let i = 0; i < 1000; i++) flags[`load/g${i % 20}/f${i}`] = { type: 'INTEGER', value: i, maxValue: 1_000_000_000 }
    const imported = await fetch(`${d.url}/api/migrations`, {
      method: 'PUT',
      headers,
      body: JSON.stringify({ environment: 'load', version: '1.0.0', createdAt: new Date().toISOString(), flags }),
    })
    expect(imported.status).toBe(200)

    const statuses = new Map<number, number>()
    let socketErrors = 0
    let stop = false
    const worker = async (id: number) => {
      let n = id
      while (!stop) {
        n++
        const i = n % 1000
        const roll = n % 10
        try {
          const res =
            roll < 7
              ? await fetch(`${d.url}/api/flags/load/g${i % 20}/f${i}`, { headers })
              : roll < 8
                ? await fetch(`${d.url}/api/flags?prefix=load/g${i % 20}/`, { headers })
                : roll < 9
                  ? await fetch(`${d.url}/health`)
                  : await fetch(`${d.url}/api/flags/load/g${i % 20}/f${i}`, { method: 'PUT', headers, body: JSON.stringify({ value: n }) })
          await res.arrayBuffer()
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
        } catch {
          socketErrors++
        }
      }
    }
    const before = rssMb(d.proc.pid)
    const workers = Array.from({ length: CONNECTIONS }, (_, i) => worker(i))
    await Bun.sleep(SECONDS * 1000)
    stop = true
    await Promise.all(workers)
    const peak = rssMb(d.proc.pid)
    // memory settles: wait until it is back under the limit (or 10 s have passed)
    const limit = Math.max(before * 2, before + 100)
    let after = rssMb(d.proc.pid)
    for (const deadline = Date.now() + 10_000; after >= limit && Date.now() < deadline; after = rssMb(d.proc.pid)) await Bun.sleep(100)
    const total = [...statuses.values()].reduce((a, b) => a + b, 0)
    console.log(
      `load: ${total} requests in ${SECONDS} s, statuses ${JSON.stringify(Object.fromEntries(statuses))}, RSS ${before.toFixed(0)} → peak ${peak.toFixed(0)} → ${after.toFixed(0)} MB`,
    )
    expect(socketErrors).toBe(0)
    expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([])
    expect([...statuses.keys()].sort()).toEqual([200])
    expect(total).toBeGreaterThan(SECONDS * 100)
    expect(after).toBeLessThan(limit)
  } finally {
    d.proc.kill('SIGTERM')
    await d.proc.exited
    rmSync(cwd, { recursive: true, force: true })
  }
})
