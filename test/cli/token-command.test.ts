/** docs/api.md#api-tokens: `flagd token add|list|revoke`, with the daemon stopped and while it runs. */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { flagPrefixArgs, parseExpires } from '../../src/cli/token-command.ts'
import { runFlagdInProcess } from '../helpers/cli-in-process.ts'
import { type Daemon, killLiveDaemons, startDaemon } from '../helpers/daemon.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(30_000)
const dirs: string[] = []
afterAll(async () => {
  await killLiveDaemons()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** A data directory with an admin user, as after `flagd user add`. */
async function bootstrapped(): Promise<string> {
  const cwd = tempDir()
  dirs.push(cwd)
  mkdirSync(join(cwd, 'data'), { mode: 0o700 })
  expect((await runFlagdInProcess(['user', 'add', 'admin', '--password-stdin'], { cwd, stdin: 'admin-password' })).code).toBe(0)
  return cwd
}

const get = (url: string, token: string, init: RequestInit = {}) =>
  fetch(url, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(init.headers ?? {}) } })

test('token add prints only the secret on stdout; the state holds only its hash', async () => {
  const cwd = await bootstrapped()
  const res = await runFlagdInProcess(
    [
      'token',
      'add',
      'ci deploy',
      '--permissions',
      'flag:read,flag:write',
      '--expires',
      '90d',
      '--flag-prefix',
      'mobile/',
      '--flag-prefix',
      'web/',
    ],
    { cwd },
  )
  expect(res.code).toBe(0)
  expect(res.stdout).toMatch(/^fdt_[A-Za-z0-9_-]{43}\n$/)
  expect(res.stderr).toContain('created token ci deploy')
  expect(res.stderr).toContain('shown once')
  const secret = res.stdout.trim()
  for (const name of readdirSync(join(cwd, 'data'))) {
    if (name.endsWith('.json')) expect(readFileSync(join(cwd, 'data', name), 'utf8')).not.toContain(secret.slice(4))
  }
  const list = await runFlagdInProcess(['token', 'list', '--json'], { cwd })
  const [token] = JSON.parse(list.stdout)
  expect(token).toMatchObject({
    name: 'ci deploy',
    permissions: ['flag:read', 'flag:write'],
    flagPrefixes: ['mobile/', 'web/'],
    createdBy: { type: 'system', name: 'cli' },
  })
  expect(Date.parse(token.expiresAt) - Date.now()).toBeGreaterThan(89 * 86_400_000)
  expect(list.stdout).not.toContain(secret)
  const table = await runFlagdInProcess(['token', 'list'], { cwd })
  expect(table.stdout).toContain('ci deploy')
  expect(table.stdout).toContain('mobile/,web/')
})

/**
 * The one daemon of the file, for the tests that need it running (their tokens differ, so either
 * may run first): started the first time one asks, after a token was made with the daemon stopped.
 */
let running: Promise<{ cwd: string; d: Daemon; madeWhileStopped: string }> | undefined
const daemon = () => {
  running ??= (async () => {
    const cwd = await bootstrapped()
    const made = await runFlagdInProcess(['token', 'add', 'deployer', '--permissions', 'flag:read,flag:write', '--flag-prefix', 'app/'], {
      cwd,
    })
    expect(made.code).toBe(0)
    return { cwd, madeWhileStopped: made.stdout.trim(), d: await startDaemon(cwd) }
  })()
  return running
}

test('a token made while stopped works once the daemon runs, and revoking it while running ends it at once', async () => {
  const { cwd, d, madeWhileStopped: secret } = await daemon()
  const created = await get(`${d.url}/api/flags`, secret, { method: 'POST', body: JSON.stringify({ name: 'app/x', type: 'BOOLEAN' }) })
  expect(created.status).toBe(201)
  const outside = await get(`${d.url}/api/flags`, secret, { method: 'POST', body: JSON.stringify({ name: 'web/x', type: 'BOOLEAN' }) })
  expect(outside.status).toBe(403)
  expect((await get(`${d.url}/api/flags/app/x`, secret)).status).toBe(200)

  const revoked = await runFlagdInProcess(['token', 'revoke', 'deployer'], { cwd })
  expect(revoked.code).toBe(0)
  expect(revoked.stdout).toContain('revoked token deployer')
  expect((await get(`${d.url}/api/flags/app/x`, secret)).status).toBe(401)
})

test('token add while the daemon runs goes through its control socket and works at once', async () => {
  const { cwd, d } = await daemon()
  const res = await runFlagdInProcess(['token', 'add', 'app', '--permissions', 'flag:evaluate'], { cwd })
  expect(res.code).toBe(0)
  const secret = res.stdout.trim()
  const me = await fetch(`${d.url}/api/me`, { headers: { 'x-api-key': secret } })
  expect(me.status).toBe(200)
  expect(((await me.json()) as { name: string }).name).toBe('app')
  expect((await get(`${d.url}/api/flags`, secret)).status).toBe(403)
  const list = await runFlagdInProcess(['token', 'list', '--json'], { cwd })
  const app = (JSON.parse(list.stdout) as { id: string; name: string; lastUsedAt: string }[]).find((t) => t.name === 'app')
  expect(app?.lastUsedAt).toMatch(/Z$/)
  const byId = await runFlagdInProcess(['token', 'revoke', app?.id as string], { cwd })
  expect(byId.code).toBe(0)
  expect((await fetch(`${d.url}/api/me`, { headers: { 'x-api-key': secret } })).status).toBe(401)
})

test('mistakes are usage errors (exit 2) or named refusals (exit 1), and create nothing', async () => {
  const cwd = await bootstrapped()
  const cases: [string[], number, string][] = [
    [['token', 'add', 'x'], 2, '--permissions is required'],
    [['token', 'add', 'x', '--permissions', 'flag:fly'], 2, 'unknown permission'],
    [['token', 'add', 'x', '--permissions', 'all', '--expires', 'soon'], 2, '--expires takes'],
    [['token', 'add', 'x', '--permissions', 'all', '--expires', '2001-01-01'], 1, 'expiresAt must be in the future'],
    [['token', 'add', 'bad/name', '--permissions', 'all'], 1, 'token name'],
    [['token', 'add', 'x', '--permissions', 'all', '--flag-prefix', 'a b'], 1, 'flagPrefixes.0'],
    [['token', 'add'], 2, 'missing <name>'],
    [['token', 'revoke', 'nobody'], 1, 'no token with id or name "nobody"'],
    [['token'], 2, 'missing command'],
  ]
  for (const [args, code, message] of cases) {
    const res = await runFlagdInProcess(args, { cwd })
    expect(res.code, args.join(' ')).toBe(code)
    expect(res.stderr, args.join(' ')).toContain(message)
    expect(res.stdout).toBe('')
  }
  expect(JSON.parse((await runFlagdInProcess(['token', 'list', '--json'], { cwd })).stdout)).toEqual([])
  const dup = await runFlagdInProcess(['token', 'add', 'twice', '--permissions', 'none'], { cwd })
  expect(dup.code).toBe(0)
  const again = await runFlagdInProcess(['token', 'add', 'twice', '--permissions', 'none'], { cwd })
  expect(again.code).toBe(1)
  expect(again.stderr).toContain('already exists')
})

test('token commands refuse a directory without a state, like user commands', async () => {
  const cwd = tempDir()
  dirs.push(cwd)
  const res = await runFlagdInProcess(['token', 'list'], { cwd })
  expect(res.code).toBe(1)
  expect(res.stderr).toContain('--data-dir')
})

test('--expires takes durations and dates; --flag-prefix repeats and splits on commas', () => {
  const now = Date.parse('2026-11-22T00:00:00Z')
  expect(parseExpires('90d', now)).toBe('2027-02-20T00:00:00.000Z')
  expect(parseExpires('12h', now)).toBe('2026-11-22T12:00:00.000Z')
  expect(parseExpires('2027-01-31', now)).toBe('2027-01-31')
  expect(() => parseExpires('0d', now)).toThrow()
  expect(flagPrefixArgs(['add', 'x', '--flag-prefix', 'a/', '--flag-prefix=b/,c/', '--', '--flag-prefix', 'z/'])).toEqual([
    'a/',
    'b/',
    'c/',
  ])
  expect(() => flagPrefixArgs(['--flag-prefix'])).toThrow()
})
