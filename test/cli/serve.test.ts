/**
 * The daemon as a process: lock, bootstrap, config precedence, graceful stop (docs/operations.md).
 * A start-up that fails before it opens anything (configuration, host name, data directory) runs
 * in-process (`runFlagdInProcess`): the sentence and the exit code are the subject, not the process.
 */

import { afterAll, afterEach, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { PERMISSIONS } from '../../src/domain/permission.ts'
import { runFlagdInProcess } from '../helpers/cli-in-process.ts'
import { FROM_SOURCE, killLiveDaemons, runFlagd, startDaemon } from '../helpers/daemon.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(30_000)

const dirs: string[] = []
const dir = () => {
  const d = tempDir()
  dirs.push(d)
  return d
}
afterEach(killLiveDaemons)
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const login = (url: string, username: string, password: string) =>
  fetch(`${url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  })

describe('one daemon per port, and start-up errors that are sentences (docs/operations.md)', () => {
  test('a second serve on a port in use exits non-zero naming the address; the first keeps it alone', async () => {
    const first = await startDaemon(dir())
    const second = await runFlagd(['serve', '--port', String(first.port)], { cwd: dir() })
    expect(second.code).not.toBe(0)
    expect(second.stderr).toContain(`error: cannot listen on 127.0.0.1:${first.port}: the address is already in use`)
    expect(second.stdout + second.stderr).not.toContain('listening on')
    for (let i = 0; i < 20; i++) expect((await fetch(`${first.url}/health`)).status).toBe(200)
  })

  test.each([
    // refused before anything opens: in-process; refused by the kernel when binding, after the store opened: a process
    [['--host', '999.1.1.1'], 'cannot listen on 999.1.1.1:', 'not a valid address or host name', runFlagdInProcess],
    [['--host', '10.255.255.254'], 'cannot listen on 10.255.255.254:', 'not an address of this machine', runFlagd],
  ])('serve %j fails with a sentence naming the address', async (args, where, why, run) => {
    const res = await run(['serve', '--port', '0', ...args], { cwd: dir() })
    expect(res.code).not.toBe(0)
    expect(res.stderr).toContain(where)
    expect(res.stderr).toContain(why)
    expect(res.stderr).not.toMatch(/E[A-Z]+:/)
  })

  test('a data directory that is a file fails with a sentence naming it', async () => {
    const cwd = dir()
    writeFileSync(join(cwd, 'data'), 'not a directory')
    const res = await runFlagdInProcess(['serve', '--port', '0'], { cwd })
    expect(res.code).not.toBe(0)
    expect(res.stderr).toContain(`data directory ${join(cwd, 'data')} is not a directory`)
    expect(res.stderr).not.toContain('EEXIST')
  })
})

describe('one daemon per data directory', () => {
  test('a second serve exits non-zero before binding; the lock dies with kill -9', async () => {
    const cwd = dir()
    const first = await startDaemon(cwd)
    const second = await runFlagd(['serve', '--port', String(first.port + 1)], { cwd })
    expect(second.code).not.toBe(0)
    expect(second.stderr).toContain('in use')
    expect(second.stdout).not.toContain('listening')
    first.proc.kill('SIGKILL')
    await first.proc.exited
    const third = await startDaemon(cwd)
    expect((await fetch(`${third.url}/health`)).status).toBe(200)
    third.proc.kill('SIGTERM')
    expect(await third.proc.exited).toBe(0)
  })
})

describe('first user', () => {
  test("FLAGD_ADMIN_USERNAME/PASSWORD create an admin with every permission, served over real HTTP: login → token → users, and the API explorer's assets", async () => {
    const cwd = dir()
    const d = await startDaemon(cwd, [], { FLAGD_ADMIN_USERNAME: 'root', FLAGD_ADMIN_PASSWORD: 'root-password' })
    expect(d.output()).toContain('created the first user')
    expect(d.output()).toContain('root')
    const res = await login(d.url, 'root', 'root-password')
    expect(res.status).toBe(200)
    const { token, user } = (await res.json()) as { token: string; user: { permissions: string[] } }
    expect(user.permissions).toEqual([...PERMISSIONS])
    const users = await fetch(`${d.url}/api/users`, { headers: { authorization: `Bearer ${token}` } })
    expect(users.status).toBe(200)
    expect(((await users.json()) as unknown[]).length).toBe(1)
    const big = await fetch(`${d.url}/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: 'x'.repeat(1024 * 1024 + 1),
    })
    expect(big.status).toBe(413)
    expect(((await big.json()) as { error: { code: string } }).error.code).toBe('PAYLOAD_TOO_LARGE')
    // the API explorer's assets, which src/ imports as files: from the tests' bundle (test/helpers/flagd-bundle.ts),
    // started in a temp directory, they resolve against the bundle's directory, not the daemon's
    for (const asset of ['swagger-ui-bundle.js', 'swagger-ui.css']) {
      const res = await fetch(`${d.url}/api/docs/${asset}`)
      expect(res.status).toBe(200)
      expect((await res.text()).length).toBeGreaterThan(10_000)
    }
    d.proc.kill('SIGTERM')
    expect(await d.proc.exited).toBe(0)
    expect(d.output()).toContain('stopped')
  })

  test('with no users and no variables it names the command that creates one, as it works from where the daemon runs (here: from source)', async () => {
    const cwd = dir()
    mkdirSync(join(cwd, 'data'), { mode: 0o755 })
    const d = await startDaemon(cwd, [], {}, FROM_SOURCE) // what a user of a clone sees, not the tests' bundle
    // the line comes before the daemon listens, so it is in the output already
    expect(d.output()).toMatch(/no users yet[\s\S]*(npx )?bun \S*src\/main\.ts user add admin --data-dir /)
    expect(d.output()).not.toMatch(/ {2}flagd user add/)
    expect(statSync(join(cwd, 'data')).mode & 0o777).toBe(0o700) // an existing 0755 data directory is tightened to 0700
    d.proc.kill('SIGINT')
    expect(await d.proc.exited).toBe(0)
  })
})

describe('configuration', () => {
  test('flagd.config.ts < environment < flags; --config names another file', async () => {
    const cwd = dir()
    writeFileSync(join(cwd, 'flagd.config.ts'), `export default { dataDir: './from-file', environment: 'from-file', host: '127.0.0.1' }\n`)
    const d = await startDaemon(cwd, ['--data-dir', './from-flag'], { FLAGD_DATA_DIR: './from-env' })
    expect(d.output()).toContain(join(cwd, 'from-flag'))
    expect(d.output()).toContain('environment from-file')
    d.proc.kill('SIGTERM')
    await d.proc.exited
    // the file --config names is read instead of flagd.config.ts, and the environment still wins over it
    writeFileSync(join(cwd, 'other.ts'), `export default { dataDir: './from-other', environment: 'other-env' }\n`)
    const e = await startDaemon(cwd, ['--config', 'other.ts'], { FLAGD_DATA_DIR: './from-env' })
    expect(e.output()).toContain(join(cwd, 'from-env'))
    expect(e.output()).toContain('environment other-env')
    e.proc.kill('SIGTERM')
    await e.proc.exited
  })

  test.each([
    [{ FLAGD_PORT: 'eighty' }, [], 'port'],
    [{ FLAGD_ENVIRONMENT: 'has space' }, [], 'environment'],
    [{ FLAGD_AUTH_TOKEN_TTL: 'forever' }, [], 'auth.tokenTtl'],
    [{ FLAGD_LIMITS_BODY_BYTES: '-1' }, [], 'limits.bodyBytes'],
    [{}, ['--port', '99999'], 'port'],
  ])('an invalid value %j %j stops start-up naming the key', async (env, args, key) => {
    const res = await runFlagdInProcess(['serve', ...args], { cwd: dir(), env })
    expect(res.code).not.toBe(0)
    expect(res.stderr).toContain(`error: invalid configuration: ${key}`)
  })

  test('an unknown key in the config file is refused', async () => {
    const cwd = dir()
    writeFileSync(join(cwd, 'flagd.config.ts'), `export default { prot: 8080 }\n`)
    const res = await runFlagdInProcess(['serve'], { cwd })
    expect(res.code).toBe(1)
    expect(res.stderr).toContain('unknown configuration key "prot"')
  })

  test('--config naming a missing file is an error', async () => {
    const missing = await runFlagdInProcess(['serve', '--config', 'nope.ts'], { cwd: dir() })
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('does not exist')
  })
})
