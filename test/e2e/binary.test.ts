/**
 * The compiled binary as a user runs it: built once, copied alone into an empty directory (no
 * node_modules), started on a random port, driven over real HTTP and through its own CLI.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Daemon, runFlagd, startDaemon } from '../helpers/daemon.ts'
import { FIXTURES, fixtureText } from '../helpers/fixtures.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(60_000)

const ROOT = join(import.meta.dir, '../..')
const buildDir = tempDir('flagd-build-')
const home = tempDir('flagd-e2e-')
const binary = [join(home, 'flagd')]
let d: Daemon

/** package.json's `build` command (the flags users' binaries are built with), writing to `outfile`. */
function buildCommand(outfile: string): string[] {
  const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { build: string } }).scripts.build
  const words = script.split(/\s+/)
  expect(words.slice(0, 2)).toEqual(['bun', 'build'])
  words[words.indexOf('--outfile') + 1] = outfile
  return [process.execPath, ...words.slice(1)]
}

beforeAll(async () => {
  const build = Bun.spawnSync(buildCommand(join(buildDir, 'flagd')), { cwd: ROOT, stderr: 'pipe', stdout: 'pipe' })
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`)
  copyFileSync(join(buildDir, 'flagd'), join(home, 'flagd'))
  Bun.spawnSync(['chmod', '+x', join(home, 'flagd')])
  writeFileSync(
    join(home, 'flagd.config.ts'),
    "import type { X } from './types'\nexport default { environment: 'e2e', import: { settleMs: 200 } }\n",
  )
  // what a hostile or careless working directory may hold: the binary reads neither (Bun's
  // executables would by default run bunfig.toml's preload scripts and load .env)
  writeFileSync(join(home, 'bunfig.toml'), 'preload = ["./preload.ts"]\n')
  writeFileSync(join(home, 'preload.ts'), "require('node:fs').writeFileSync('preloaded', 'yes')\n")
  writeFileSync(join(home, '.env'), 'FLAGD_ENVIRONMENT=from-dotenv\n')
  expect(existsSync(join(home, 'node_modules'))).toBe(false)
  d = await startDaemon(home, [], {}, binary)
}, 120_000)

afterAll(() => {
  d?.proc.kill('SIGKILL')
  rmSync(buildDir, { recursive: true, force: true })
  rmSync(home, { recursive: true, force: true })
})

const api = (path: string, init: RequestInit & { token?: string } = {}) =>
  fetch(`${d.url}${path}`, {
    ...init,
    headers: {
      'content-type': 'application/json',
      ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
      ...(init.headers ?? {}),
    },
  })

async function login(): Promise<string> {
  const res = await api('/api/login', { method: 'POST', body: JSON.stringify({ username: 'admin', password: 'admin-password' }) })
  expect(res.status).toBe(200)
  return ((await res.json()) as { token: string }).token
}

test('the binary runs no bunfig.toml preload from its working directory (nor reads its .env: see the export test)', () => {
  expect(existsSync(join(home, 'preloaded'))).toBe(false)
})

test('health, and the version command', async () => {
  const res = await fetch(`${d.url}/health`)
  expect(await res.json()).toEqual({ status: 'ok', version: expect.any(String), flags: 0 })
  expect((await runFlagd(['version'], { cwd: home, command: binary })).stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/)
})

test('bootstrap the first admin with the CLI while the daemon runs, then log in', async () => {
  const add = await runFlagd(['user', 'add', 'admin', '--password-stdin'], { cwd: home, stdin: 'admin-password', command: binary })
  expect(add.code).toBe(0)
  await login()
})

test('a flag round trip over HTTP', async () => {
  const token = await login()
  const created = await api('/api/flags', {
    method: 'POST',
    token,
    body: JSON.stringify({ name: 'e2e/checkout/limit', type: 'INTEGER', defaultValue: 1, value: 5, maxValue: 10 }),
  })
  expect(created.status).toBe(201)
  const updated = await api('/api/flags/e2e/checkout/limit', {
    method: 'PUT',
    token,
    headers: { 'if-match': '"1"' },
    body: JSON.stringify({ value: 6 }),
  })
  expect(((await updated.json()) as { value: number }).value).toBe(6)
  const docs = await fetch(`${d.url}/api/docs/swagger-ui-bundle.js`)
  expect(docs.status).toBe(200)
  expect(((await (await fetch(`${d.url}/api/openapi.json`)).json()) as { openapi: string }).openapi).toStartWith('3.0.')
  // the web UI is inside the binary: its page and every asset it names
  const ui = await (await fetch(`${d.url}/ui/`)).text()
  const assets = [...ui.matchAll(/\/ui\/assets\/[^"]+/g)].map((m) => m[0])
  expect(assets.length).toBeGreaterThanOrEqual(2)
  for (const path of assets) expect((await fetch(`${d.url}${path}`)).status).toBe(200)
})

test('an API token from the CLI, used with curl-like requests, then revoked', async () => {
  const add = await runFlagd(
    ['token', 'add', 'e2e ci', '--permissions', 'flag:read,flag:write', '--flag-prefix', 'e2e/', '--expires', '30d'],
    { cwd: home, command: binary },
  )
  expect(add.code).toBe(0)
  const secret = add.stdout.trim()
  expect(secret).toMatch(/^fdt_/)
  const headers = { 'x-api-key': secret }
  expect((await api('/api/flags/e2e/checkout/limit', { headers })).status).toBe(200)
  expect((await api('/api/flags/e2e/checkout/limit', { method: 'PUT', headers, body: JSON.stringify({ value: 7 }) })).status).toBe(200)
  expect((await api('/api/flags', { method: 'POST', headers, body: JSON.stringify({ name: 'other/x', type: 'BOOLEAN' }) })).status).toBe(
    403,
  )
  expect((await api('/api/migrations/export', { headers })).status).toBe(403)
  expect((await runFlagd(['token', 'revoke', 'e2e ci'], { cwd: home, command: binary })).code).toBe(0)
  expect((await api('/api/flags/e2e/checkout/limit', { token: secret })).status).toBe(401)
})

test('a dropped file is imported', async () => {
  const dir = join(home, 'data', 'import')
  writeFileSync(join(dir, '.drop.tmp'), fixtureText('valid-merge.json'))
  renameSync(join(dir, '.drop.tmp'), join(dir, 'drop.json'))
  const deadline = Date.now() + 10_000
  while (readdirSync(join(dir, 'processed')).length < 2 && Date.now() < deadline) await Bun.sleep(50)
  expect(readdirSync(join(dir, 'processed'))).toHaveLength(2)
})

test('export and import through the CLI while the daemon runs', async () => {
  const out = await runFlagd(['export'], { cwd: home, command: binary })
  expect(out.code).toBe(0)
  const doc = JSON.parse(out.stdout)
  expect(doc.environment).toBe('e2e') // flagd.config.ts; the .env beside it says otherwise
  expect(Object.keys(doc.flags)).toEqual(['app/max_retries', 'app/new_checkout', 'e2e/checkout/limit', 'ui/theme'])
  const again = await runFlagd(['import', join(FIXTURES, 'valid-merge.json')], { cwd: home, command: binary })
  expect(again.stdout).toContain('3 unchanged')
})

test('every line the binary writes is a JSON log line: no framework warnings in the stream', async () => {
  const token = await login()
  for (const path of [
    '/api/flags',
    '/api/users',
    '/api/sessions',
    '/api/tokens',
    '/api/me',
    '/api/migrations/export',
    '/api/openapi.json',
    '/metrics',
  ]) {
    await (await api(path, { token })).arrayBuffer()
  }
  await (await api('/api/flags', { method: 'POST', token, body: JSON.stringify({ name: 'lines/f', type: 'BOOLEAN' }) })).arrayBuffer()
  await Bun.sleep(400) // the log is flushed every 200 ms
  const lines = d
    .output()
    .split('\n')
    .filter((l) => l.trim() !== '')
  expect(lines.length).toBeGreaterThan(5)
  for (const line of lines) expect(() => JSON.parse(line), line.slice(0, 200)).not.toThrow()
  expect(d.output()).not.toContain('Sucrose')
})

test('SIGTERM exits 0, and a restart on the same data dir keeps the flags', async () => {
  d.proc.kill('SIGTERM')
  expect(await d.proc.exited).toBe(0)
  expect(existsSync(join(home, 'data', 'flagd.sock'))).toBe(false)
  d = await startDaemon(home, [], {}, binary)
  const token = await login()
  const flag = await api('/api/flags/e2e/checkout/limit', { token })
  expect((await flag.json()) as { value: number; revision: number }).toMatchObject({ value: 7, revision: 3 }) // 7: set with the API token
  d.proc.kill('SIGTERM')
  expect(await d.proc.exited).toBe(0)
})
