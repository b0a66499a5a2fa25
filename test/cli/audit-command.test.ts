/**
 * docs/api.md#audit-log from outside the process: changes made through the API, the CLI, an upload and the
 * drop folder, read back with `flagd audit` (daemon running, then stopped), and the change stream
 * catching up from the log across a restart.
 */

import { afterAll, afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runFlagdInProcess } from '../helpers/cli-in-process.ts'
import { killLiveDaemons, startDaemon } from '../helpers/daemon.ts'
import { FIXTURES, fixtureText } from '../helpers/fixtures.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(30_000)
const cwd = tempDir()
afterEach(killLiveDaemons)
afterAll(() => rmSync(cwd, { recursive: true, force: true }))

const ENV = { FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: 'admin-password', FLAGD_IMPORT_SETTLE_MS: '200' }

test('who changed what: API, CLI import, upload and drop folder, read with flagd audit running and stopped; the stream catches up after a restart', async () => {
  let d = await startDaemon(cwd, [], ENV)
  const login = await fetch(`${d.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'admin-password' }),
  })
  const token = ((await login.json()) as { token: string }).token
  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fetch(`${d.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })

  expect((await api('POST', '/api/flags', { name: 'app/limit', type: 'INTEGER', value: 1 }, { 'x-request-id': 'by-api' })).status).toBe(201)
  expect((await runFlagdInProcess(['import', join(FIXTURES, 'valid-merge.json')], { cwd })).code).toBe(0)
  const upload = { environment: 'x', version: '1.0.0', createdAt: new Date().toISOString(), flags: { 'up/one': { type: 'BOOLEAN' } } }
  expect((await api('PUT', '/api/migrations', upload)).status).toBe(200)
  const drop = join(cwd, 'data', 'import')
  writeFileSync(join(drop, '.x.tmp'), fixtureText('valid-tighter-constraints.json'))
  renameSync(join(drop, '.x.tmp'), join(drop, 'tight.json'))
  const deadline = Date.now() + 10_000
  while (readdirSync(join(drop, 'processed')).length < 2 && Date.now() < deadline) await Bun.sleep(50)

  const running = await runFlagdInProcess(['audit', '--json', '--limit', '1000'], { cwd })
  expect(running.code).toBe(0)
  const entries = JSON.parse(running.stdout) as {
    id: number
    source: string
    requestId: string
    actor: { type: string; name: string }
    action: string
    target: { name?: string }
  }[]
  const sources = new Set(entries.map((e) => e.source))
  for (const s of ['bootstrap', 'api', 'cli', 'import-upload', 'drop-folder']) expect(sources.has(s), s).toBe(true)
  expect(entries.find((e) => e.requestId === 'by-api')).toMatchObject({
    action: 'flag.created',
    actor: { type: 'user', name: 'admin' },
    target: { name: 'app/limit' },
  })
  const cli = entries.filter((e) => e.source === 'cli')
  expect(new Set(cli.map((e) => e.requestId)).size).toBe(1) // one CLI command, one request id
  expect(cli.every((e) => e.actor.type === 'system' && e.actor.name === 'cli')).toBe(true)
  const dropped = entries.filter((e) => e.source === 'drop-folder')
  expect(dropped.length).toBeGreaterThan(0)
  expect(dropped.every((e) => e.actor.name === 'drop-folder')).toBe(true)
  const newest = Math.max(...entries.map((e) => e.id))

  // the daemon stops; a change is made meanwhile; the stream catches up from the log after the restart
  d.proc.kill('SIGTERM')
  expect(await d.proc.exited).toBe(0)
  const stopped = await runFlagdInProcess(['audit', '--flag', 'app/limit'], { cwd })
  expect(stopped.code).toBe(0)
  expect(stopped.stdout).toContain('flag.created')
  expect(stopped.stdout).toContain('app/limit')
  expect((await runFlagdInProcess(['import', join(FIXTURES, 'valid-tighter-constraints.json'), '--mode', 'replace'], { cwd })).code).toBe(0)

  d = await startDaemon(cwd, [], ENV)
  const again = await fetch(`${d.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'admin-password' }),
  })
  const token2 = ((await again.json()) as { token: string }).token
  const abort = new AbortController()
  const res = await fetch(`${d.url}/api/events`, {
    headers: { authorization: `Bearer ${token2}`, 'last-event-id': String(newest) },
    signal: abort.signal,
  })
  const reader = res.body!.getReader()
  let text = ''
  const until = Date.now() + 5000
  while (!/event: flag\.deleted/.test(text) && Date.now() < until) text += new TextDecoder().decode((await reader.read()).value)
  abort.abort()
  expect(text).toMatch(/event: flag\.deleted/) // the replace import, made while the daemon was stopped
  const ids = [...text.matchAll(/id: (\d+)/g)].map((m) => Number(m[1]))
  expect(ids.every((id) => id > newest)).toBe(true)
})
