/** `flagd user add|list`, `flagd version`, help and exit codes. */

import { afterAll, afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { PERMISSIONS } from '../../src/domain/permission.ts'
import { runFlagdInProcess } from '../helpers/cli-in-process.ts'
import { killLiveDaemons, runFlagd, startDaemon } from '../helpers/daemon.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(30_000)
afterEach(killLiveDaemons) // a failed test leaves no daemon running

const cwd = tempDir()
mkdirSync(join(cwd, 'data')) // an existing, empty data directory: `user add` may initialise it
afterAll(() => rmSync(cwd, { recursive: true, force: true }))

test('user add reads the password from stdin and grants every permission by default', async () => {
  const res = await runFlagdInProcess(['user', 'add', 'alice', '--password-stdin'], { cwd, stdin: 'alice-password\n' })
  expect(res.code).toBe(0)
  expect(res.stdout).toContain('created user alice')
  const list = await runFlagdInProcess(['user', 'list', '--json'], { cwd })
  const users = JSON.parse(list.stdout)
  expect(users).toHaveLength(1)
  expect(users[0].permissions).toEqual([...PERMISSIONS])
  expect(list.stdout).not.toContain('argon2')
})

test('user add with a permission list, then log in with it', async () => {
  const res = await runFlagdInProcess(['user', 'add', 'bob', '--permissions', 'flag:read,flag:write', '--password-stdin'], {
    cwd,
    stdin: 'bob-password',
  })
  expect(res.code).toBe(0)
  const d = await startDaemon(cwd)
  const login = await fetch(`${d.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"username":"bob","password":"bob-password"}',
  })
  expect(((await login.json()) as { user: { permissions: string[] } }).user.permissions).toEqual(['flag:read', 'flag:write'])
  const whileRunning = await runFlagdInProcess(['user', 'list', '--json'], { cwd })
  expect(whileRunning.code).toBe(0)
  expect(JSON.parse(whileRunning.stdout).map((u: { username: string }) => u.username)).toEqual(['alice', 'bob'])
  d.proc.kill('SIGTERM')
  await d.proc.exited
})

test('user list prints a table', async () => {
  const res = await runFlagdInProcess(['user', 'list'], { cwd })
  expect(res.code).toBe(0)
  expect(res.stdout.split('\n')[0]).toMatch(/^ID\s+USERNAME\s+PERMISSIONS\s+CREATED$/)
  expect(res.stdout).toContain('alice')
})

test.each([
  [['user', 'add', 'alice', '--password-stdin'], 'alice-password', 1, 'taken'],
  [['user', 'add', 'carl', '--password-stdin'], 'short', 1, 'at least 8'],
  [['user', 'add', 'carl', '--permissions', 'flag:fly', '--password-stdin'], 'carl-password', 2, 'unknown permission'],
  [['user', 'add', 'carl'], undefined, 2, '--password-stdin'],
  [['user', 'add'], undefined, 2, 'missing <username>: usage is flagd user add <username> [options]'],
  [['user', 'add', '--permissions', 'none'], undefined, 2, 'missing <username>'],
  [[], undefined, 2, 'missing command: one of serve, user'],
  [['user', 'add', 'carl', '--pasword-stdin'], undefined, 2, 'unknown option "--pasword-stdin"; did you mean --password-stdin?'],
  [['user', 'add', 'carl', '--permisions', 'none'], undefined, 2, 'unknown option "--permisions"; did you mean --permissions?'],
  [['user', 'remove', 'carl'], undefined, 2, 'unknown command'],
  [['frobnicate'], undefined, 2, 'unknown command "frobnicate"; try --help'],
  [['usr', 'list'], undefined, 2, 'unknown command "usr"; did you mean user?'],
  // command words named like built-in properties of objects are unknown commands too
  [['toString'], undefined, 2, 'unknown command "toString"'],
  [['constructor'], undefined, 2, 'unknown command "constructor"'],
  [['user', 'hasOwnProperty'], undefined, 2, 'unknown command "hasOwnProperty"'],
  [['user', '__proto__'], undefined, 2, 'unknown command "__proto__"'],
  [['user'], undefined, 2, 'missing command'],
])('%j fails with the right exit code', async (args, stdin, code, text) => {
  const res = await runFlagdInProcess(args, { cwd, stdin })
  expect(res.code).toBe(code)
  expect(res.stderr).toStartWith('error: ')
  expect(res.stderr).toContain(text)
})

test('--help on every command, version', async () => {
  for (const args of [['--help'], ['serve', '--help'], ['user', '--help'], ['user', 'add', '--help'], ['user', 'list', '--help']]) {
    const res = await runFlagdInProcess(args, { cwd })
    expect(res.code).toBe(0)
    expect(res.stdout + res.stderr).toContain('USAGE')
  }
  const v = await runFlagdInProcess(['version'], { cwd })
  expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/)
})

test('help in a pipe carries no colour codes', async () => {
  for (const args of [['--help'], ['user', '--help'], []]) {
    const res = await runFlagdInProcess(args, { cwd, env: { NO_COLOR: '' } })
    expect(res.stdout + res.stderr).toContain('USAGE')
    expect(res.stdout + res.stderr).not.toContain('\u001b[')
  }
})

test('the spawned process exits with the code and prints what the in-process runs above show', async () => {
  const usage = await runFlagd(['usr', 'list'], { cwd })
  expect([usage.code, usage.stdout]).toEqual([2, ''])
  expect(usage.stderr).toContain('error: unknown command "usr"; did you mean user?')
  const list = await runFlagd(['user', 'list', '--json'], { cwd })
  expect(list.code).toBe(0)
  expect(JSON.parse(list.stdout).map((u: { username: string }) => u.username)).toEqual(['alice', 'bob'])
})
