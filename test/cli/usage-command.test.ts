/**
 * `flagd usage` (docs/api.md#usage) from a shell: with the daemon running (through its control socket,
 * counts not yet written included) and stopped (the counts it wrote at shutdown), as a table and as
 * JSON, and `--stale`. A kill -9 keeps every count written before it.
 */

import { afterAll, afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { runFlagdInProcess } from '../helpers/cli-in-process.ts'
import { type Daemon, killLiveDaemons, startDaemon } from '../helpers/daemon.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(30_000)
const dirs: string[] = []
afterEach(killLiveDaemons)
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const ENV = { FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: 'admin-password' }

async function admin(d: Daemon) {
  const login = await fetch(`${d.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'admin-password' }),
  })
  const token = ((await login.json()) as { token: string }).token
  return (method: string, path: string, body?: unknown) =>
    fetch(`${d.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
}

test('flagd usage: running and stopped, table and JSON, --stale', async () => {
  const used = {
    name: 'used',
    total: 3,
    lastEvaluatedAt: expect.any(String),
    lastSyncedAt: null,
    lastServedInProcessAt: null,
    heldInProcess: false,
    stale: false,
    potentiallyStale: false,
    archived: false,
  }
  const cwd = tempDir()
  dirs.push(cwd)
  const d = await startDaemon(cwd, [], ENV)
  const api = await admin(d)
  await api('POST', '/api/flags', { name: 'used', type: 'BOOLEAN', value: true })
  await api('POST', '/api/flags', { name: 'idle', type: 'BOOLEAN' })
  for (let i = 0; i < 3; i++) expect((await api('POST', '/ofrep/v1/evaluate/flags/used', { context: {} })).status).toBe(200)

  const running = await runFlagdInProcess(['usage', '--json'], { cwd })
  expect(running.code).toBe(0)
  expect(JSON.parse(running.stdout)).toEqual([
    {
      name: 'idle',
      total: 0,
      lastEvaluatedAt: null,
      lastSyncedAt: null,
      lastServedInProcessAt: null,
      heldInProcess: false,
      stale: false,
      potentiallyStale: false,
      archived: false,
    },
    used,
  ])
  const table = await runFlagdInProcess(['usage'], { cwd })
  expect(table.stdout).toMatch(/FLAG\s+EVALUATIONS \(30 DAYS\)\s+LAST EVALUATED\s+IN-PROCESS\s+STALE/)
  expect(table.stdout).toMatch(/idle\s+0\s+never/)
  expect((await runFlagdInProcess(['usage', '--stale'], { cwd })).stdout.trim()).toBe('no stale flags')

  d.proc.kill('SIGTERM')
  expect(await d.proc.exited).toBe(0)
  const stopped = await runFlagdInProcess(['usage', '--json'], { cwd })
  expect(JSON.parse(stopped.stdout)).toContainEqual(used)
  // a flag left alone longer than usage.staleDays is stale (its last change is what counts here)
  const later = await runFlagdInProcess(['usage', '--stale', '--json'], { cwd, env: { FLAGD_USAGE_STALE_DAYS: '1' } })
  expect(JSON.parse(later.stdout)).toEqual([])
})

test('kill -9 loses at most the counts not yet written; the written ones stay whole', async () => {
  const cwd = tempDir()
  dirs.push(cwd)
  const d = await startDaemon(cwd, [], ENV)
  const api = await admin(d)
  await api('POST', '/api/flags', { name: 'hard', type: 'INTEGER', value: 7 })
  for (let i = 0; i < 5; i++) await api('POST', '/ofrep/v1/evaluate/flags/hard', { context: {} })
  // the first minute's write has not come yet: a kill -9 now loses these five, and nothing else
  d.proc.kill('SIGKILL')
  await d.proc.exited
  const after = await runFlagdInProcess(['usage', '--json'], { cwd })
  expect(after.code).toBe(0)
  const hard = (JSON.parse(after.stdout) as { name: string; total: number }[]).find((u) => u.name === 'hard')
  expect(hard?.total === 0 || hard?.total === 5).toBe(true)
  const d2 = await startDaemon(cwd, [], ENV)
  const api2 = await admin(d2)
  await api2('POST', '/ofrep/v1/evaluate/flags/hard', { context: {} })
  d2.proc.kill('SIGTERM')
  expect(await d2.proc.exited).toBe(0)
  const total = (JSON.parse((await runFlagdInProcess(['usage', '--json'], { cwd })).stdout) as { name: string; total: number }[]).find(
    (u) => u.name === 'hard',
  )?.total
  expect(total).toBe((hard?.total ?? 0) + 1)
})
