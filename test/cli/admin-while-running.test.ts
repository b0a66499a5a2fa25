/** Issue 5: every admin command works while the daemon runs, through its control socket. */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { runFlagdInProcess } from '../helpers/cli-in-process.ts'
import { type Daemon, startDaemon } from '../helpers/daemon.ts'
import { FIXTURES } from '../helpers/fixtures.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(30_000)
const cwd = tempDir()
let d: Daemon
beforeAll(async () => {
  d = await startDaemon(cwd)
})
afterAll(async () => {
  d.proc.kill('SIGTERM')
  await d.proc.exited
  rmSync(cwd, { recursive: true, force: true })
})

const login = (username: string, password: string) =>
  fetch(`${d.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  })

test('the control socket is 0600 inside the data directory', () => {
  expect(statSync(join(cwd, 'data', 'flagd.sock')).mode & 0o777).toBe(0o600)
})

test('bootstrap an admin, reset a password and delete a user without stopping the daemon', async () => {
  expect((await runFlagdInProcess(['user', 'add', 'root', '--password-stdin'], { cwd, stdin: 'root-password' })).code).toBe(0)
  const first = await login('root', 'root-password')
  expect(first.status).toBe(200)
  const { token } = (await first.json()) as { token: string }
  expect(
    (await runFlagdInProcess(['user', 'add', 'temp', '--permissions', 'flag:read', '--password-stdin'], { cwd, stdin: 'temp-password' }))
      .code,
  ).toBe(0)

  const passwd = await runFlagdInProcess(['user', 'passwd', 'root', '--password-stdin'], { cwd, stdin: 'new-root-password\n' })
  expect(passwd.code).toBe(0)
  expect((await fetch(`${d.url}/api/me`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401)
  expect((await login('root', 'new-root-password')).status).toBe(200)

  const del = await runFlagdInProcess(['user', 'delete', 'temp'], { cwd })
  expect(del.code).toBe(0)
  expect((await login('temp', 'temp-password')).status).toBe(401)
  const missing = await runFlagdInProcess(['user', 'delete', 'temp'], { cwd })
  expect(missing.code).toBe(1)
  expect(missing.stderr).toContain('no user named "temp"')
  const last = await runFlagdInProcess(['user', 'delete', 'root'], { cwd })
  expect(last.code).toBe(1)
  expect(last.stderr).toContain('last user with user:write')
})

test('import and export go through the daemon', async () => {
  const imported = await runFlagdInProcess(['import', join(FIXTURES, 'valid-merge.json'), '--json'], { cwd })
  expect(imported.code).toBe(0)
  expect(JSON.parse(imported.stdout).summary.created).toBe(3)
  const bad = await runFlagdInProcess(['import', join(FIXTURES, 'invalid-three-errors.json')], { cwd })
  expect(bad.code).toBe(1)
  expect(bad.stderr).toContain('3 problem(s)')
  const out = await runFlagdInProcess(['export', '--out', 'x.json'], { cwd })
  expect(out.code).toBe(0)
  expect(Object.keys(JSON.parse(readFileSync(join(cwd, 'x.json'), 'utf8')).flags)).toHaveLength(3)
  // flagd's format through the control socket too
  const flagd = await runFlagdInProcess(['export', '--format', 'flagd', '--out', 'f.json'], { cwd })
  expect([flagd.code, flagd.stderr]).toEqual([0, expect.stringContaining('wrote 3 flags to f.json')])
  expect(Object.keys(JSON.parse(readFileSync(join(cwd, 'f.json'), 'utf8')).flags)).toHaveLength(3)
})

test('user unlock clears a lockout while the daemon runs', async () => {
  expect(
    (await runFlagdInProcess(['user', 'add', 'locked', '--permissions', 'none', '--password-stdin'], { cwd, stdin: 'locked-password' }))
      .code,
  ).toBe(0)
  for (let i = 0; i < 5; i++) expect((await login('locked', 'wrong-password')).status).toBe(401)
  expect((await login('locked', 'locked-password')).status).toBe(429)
  const unlock = await runFlagdInProcess(['user', 'unlock', 'locked'], { cwd })
  expect(unlock.code).toBe(0)
  expect(unlock.stdout).toContain('cleared')
  expect((await login('locked', 'locked-password')).status).toBe(200)
})
