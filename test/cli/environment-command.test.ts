/**
 * `flagd env` and `flagd promote` (docs/environments.md) from a shell: with the daemon running
 * (through its control socket) and stopped (in-process), and their mistakes.
 */

import { afterAll, afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { runFlagdInProcess } from '../helpers/cli-in-process.ts'
import { killLiveDaemons, startDaemon } from '../helpers/daemon.ts'
import { createTestApp, SYSTEM, tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(30_000)
const dirs: string[] = []
afterEach(killLiveDaemons)
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

test('flagd env add/list/remove and flagd promote, while the daemon runs and while it is stopped', async () => {
  const cwd = tempDir()
  dirs.push(cwd)
  const d = await startDaemon(cwd, [], { FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: 'admin-password', FLAGD_ENVIRONMENT: 'dev' })
  const login = await fetch(`${d.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'admin-password' }),
  })
  const headers = { authorization: `Bearer ${((await login.json()) as { token: string }).token}`, 'content-type': 'application/json' }
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${d.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  expect((await api('POST', '/api/flags', { name: 'shop/limit', type: 'INTEGER', value: 1 })).status).toBe(201)

  // running: through the control socket
  expect((await runFlagdInProcess(['env', 'add', 'staging', '--description', 'before prod'], { cwd })).stdout).toContain(
    'created environment staging',
  )
  expect((await runFlagdInProcess(['env', 'add', 'prod'], { cwd })).code).toBe(0)
  const listed = JSON.parse((await runFlagdInProcess(['env', 'list', '--json'], { cwd })).stdout) as { name: string; default: boolean }[]
  expect(listed.map((e) => [e.name, e.default])).toEqual([
    ['dev', true],
    ['staging', false],
    ['prod', false],
  ])
  expect((await api('PUT', '/api/flags/shop/limit?environment=staging', { value: 5 })).status).toBe(200)
  const dry = await runFlagdInProcess(['promote', '--from', 'staging', '--to', 'prod', '--dry-run'], { cwd })
  expect(dry.stdout).toContain('shop/limit: value 1 → 5')
  expect(dry.stdout).toContain('would change 1 flag(s) in prod; 0 already equal')
  expect(((await (await api('GET', '/api/flags/shop/limit?environment=prod')).json()) as { value: number }).value).toBe(1)
  expect((await runFlagdInProcess(['promote', '--from', 'staging', '--to', 'prod', 'shop/limit'], { cwd })).stdout).toContain(
    'changed 1 flag(s) in prod',
  )
  expect(((await (await api('GET', '/api/flags/shop/limit?environment=prod')).json()) as { value: number }).value).toBe(5)
  const token = await runFlagdInProcess(['token', 'add', 'app', '--permissions', 'flag:evaluate', '--environment', 'prod'], { cwd })
  const evaluated = await fetch(`${d.url}/ofrep/v1/evaluate/flags/shop/limit`, {
    method: 'POST',
    headers: { 'x-api-key': token.stdout.trim(), 'content-type': 'application/json' },
    body: '{}',
  })
  expect(((await evaluated.json()) as { value: number }).value).toBe(5)

  // an export of one environment, through the control socket
  const exported = JSON.parse((await runFlagdInProcess(['export', '--environment', 'prod'], { cwd })).stdout) as {
    environment: string
    flags: Record<string, { value: number }>
  }
  expect(exported.environment).toBe('prod')
  expect(exported.flags['shop/limit']?.value).toBe(5)
  expect(JSON.parse((await runFlagdInProcess(['export'], { cwd })).stdout).flags['shop/limit'].value).toBe(1)

  // an import into one environment, through the control socket
  const file = `${cwd}/release.json`
  const release = (value: number) =>
    Bun.write(
      file,
      JSON.stringify({
        environment: 'x',
        version: '1.0.0',
        createdAt: '2026-11-27T00:00:00Z',
        flags: { 'shop/limit': { type: 'INTEGER', value } },
      }),
    )
  await release(9)
  expect((await runFlagdInProcess(['import', file, '--environment', 'staging'], { cwd })).code).toBe(0)
  expect(((await (await api('GET', '/api/flags/shop/limit?environment=staging')).json()) as { value: number }).value).toBe(9)
  expect(((await (await api('GET', '/api/flags/shop/limit')).json()) as { value: number }).value).toBe(1)
  const nowhere = await runFlagdInProcess(['import', file, '--environment', 'nowhere'], { cwd })
  expect(nowhere.code).toBe(1)
  expect(nowhere.stderr).toContain('nowhere')

  // mistakes: named, exit 1 (refused) or 2 (usage)
  expect((await runFlagdInProcess(['env', 'remove', 'dev'], { cwd })).code).toBe(1)
  expect((await runFlagdInProcess(['promote', '--from', 'staging'], { cwd })).code).toBe(2)
  const unknown = await runFlagdInProcess(['promote', '--from', 'nowhere', '--to', 'prod'], { cwd })
  expect(unknown.code).toBe(1)
  expect(unknown.stderr).toContain('nowhere')

  // stopped: in-process over the data directory
  d.proc.kill('SIGTERM')
  expect(await d.proc.exited).toBe(0)
  expect((await runFlagdInProcess(['env', 'remove', 'staging'], { cwd })).stdout).toContain('removed environment staging')
  expect((await runFlagdInProcess(['env', 'list'], { cwd })).stdout).not.toContain('staging')
  const flagd = JSON.parse((await runFlagdInProcess(['export', '--format', 'flagd', '--environment', 'prod'], { cwd })).stdout) as {
    flags: Record<string, { defaultVariant: string; variants: Record<string, number> }>
  }
  const limit = flagd.flags['shop/limit'] as { defaultVariant: string; variants: Record<string, number> }
  expect(limit.variants[limit.defaultVariant]).toBe(5)
  await release(11)
  expect((await runFlagdInProcess(['import', file, '--environment', 'prod'], { cwd })).code).toBe(0)
  expect(JSON.parse((await runFlagdInProcess(['export', '--environment', 'prod'], { cwd })).stdout).flags['shop/limit'].value).toBe(11)
  expect(JSON.parse((await runFlagdInProcess(['export'], { cwd })).stdout).flags['shop/limit'].value).toBe(1)
})

test('flagd promote --dry-run into a protected environment says applying it would be refused, and changes nothing', async () => {
  const cwd = tempDir()
  dirs.push(cwd)
  const app = await createTestApp({ FLAGD_ENVIRONMENT: 'prod' }, { dataDir: join(cwd, 'data') })
  const s = app.app.services
  await s.environments.put(SYSTEM, 'staging', {})
  await s.flags.create(SYSTEM, { name: 'shop/limit', type: 'INTEGER', value: 1 })
  await s.flags.update(SYSTEM, 'shop/limit', { value: 2 }, undefined, undefined, 'staging')
  await s.environments.put(SYSTEM, 'prod', { protected: true, requiredApprovals: 1 })
  await app.close()
  const dry = await runFlagdInProcess(['promote', '--from', 'staging', '--to', 'prod', '--dry-run'], { cwd })
  expect(dry.code).toBe(0)
  expect(dry.stdout).toContain('would change 1 flag(s) in prod')
  expect(dry.stdout).toContain('applying it would be refused: environment prod is protected')
  const json = JSON.parse(
    (await runFlagdInProcess(['promote', '--from', 'staging', '--to', 'prod', '--dry-run', '--json'], { cwd })).stdout,
  )
  expect(json.applyError).toMatchObject({ code: 'CHANGE_REQUEST_REQUIRED', details: { environment: 'prod' } })
})
