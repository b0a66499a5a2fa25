/**
 * `flagd storage copy --to postgres://…` from outside (docs/operations.md#replicas): a single-VM install moved onto
 * PostgreSQL keeps its flags and revisions, users, sessions (the secret moves too), API tokens and
 * the audit log (a renamed flag's history included); a running daemon, a database already holding a
 * flagd state, and a bad URL are refused with a sentence and change nothing; the password in the URL
 * is never printed.
 */

import { afterAll, afterEach, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { runFlagdInProcess } from '../helpers/cli-in-process.ts'
import { killLiveDaemons, startDaemon } from '../helpers/daemon.ts'
import { findPostgresBin, type PostgresServer, startPostgres } from '../helpers/postgres.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(60_000)
const bin = findPostgresBin()
let server: PostgresServer | undefined
const dirs: string[] = []
const ENV = { FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: 'admin-password' }
const json = { 'content-type': 'application/json' }

beforeAll(async () => {
  if (bin) server = await startPostgres(bin)
})
afterEach(killLiveDaemons)
afterAll(async () => {
  await server?.destroy()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

test.skipIf(!bin)('a data directory moves into PostgreSQL whole: sessions, tokens, flags, history; a second copy is refused', async () => {
  const cwd = tempDir()
  dirs.push(cwd)
  let d = await startDaemon(cwd, [], ENV)
  const login = await fetch(`${d.url}/api/login`, {
    method: 'POST',
    headers: json,
    body: JSON.stringify({ username: 'admin', password: 'admin-password' }),
  })
  const session = ((await login.json()) as { token: string }).token
  const api = (method: string, path: string, body?: unknown, token = session) =>
    fetch(`${d.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...json },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
  await api('POST', '/api/flags', { name: 'app/old_name', type: 'INTEGER', value: 1 })
  await api('PUT', '/api/flags/app/old_name', { value: 2 })
  await api('PUT', '/api/flags/app/old_name', { name: 'app/new_name' })
  const apiToken = ((await (await api('POST', '/api/tokens', { name: 'ci', permissions: ['flag:read'] })).json()) as { token: string })
    .token
  const url = (await server!.freshDatabase()).replace('flagd@', 'flagd:not-a-real-password@')

  const whileRunning = await runFlagdInProcess(['storage', 'copy', '--to', url], { cwd })
  expect(whileRunning.code).not.toBe(0)
  expect(whileRunning.stderr).toContain('stop it first')
  d.proc.kill('SIGTERM')
  await d.proc.exited
  writeFileSync(join(cwd, 'data', 'webhooks.json'), JSON.stringify({ ci: 2 })) // a webhook's delivery cursor

  const copied = await runFlagdInProcess(['storage', 'copy', '--to', url], { cwd })
  expect(copied.stderr).toContain('copied 1 flags, 1 users, 1 sessions, 1 API tokens')
  expect(copied.code).toBe(0)
  expect(copied.stderr + copied.stdout).not.toContain('not-a-real-password')
  const db = new SQL(url)
  expect((await db`SELECT value FROM flagd_settings WHERE key = 'webhook-cursors'`)[0].value).toBe('{"ci":2}')
  await db.close()
  const again = await runFlagdInProcess(['storage', 'copy', '--to', url], { cwd })
  expect(again.code).not.toBe(0)
  expect(again.stderr).toContain('already holds a flagd state')
  expect(again.stderr).not.toContain('not-a-real-password')

  const replicaDir = tempDir()
  dirs.push(replicaDir)
  d = await startDaemon(replicaDir, [], { FLAGD_STORAGE_POSTGRES_URL: url })
  expect((await api('GET', '/api/me')).status).toBe(200) // the session survived: the secret moved too
  const flag = (await (await api('GET', '/api/flags/app/new_name', undefined, apiToken)).json()) as { value: number; revision: number }
  expect(flag).toMatchObject({ value: 2, revision: 3 })
  const history = (await (await api('GET', '/api/audit?flag=app/new_name')).json()) as { action: string; revision: number }[]
  expect(history.map((e) => e.revision)).toEqual([3, 2, 1])
  expect((await api('PUT', '/api/flags/app/new_name', { value: 5 })).status).toBe(200)
  expect(((await (await api('GET', '/api/flags/app/new_name')).json()) as { revision: number }).revision).toBe(4)
  const rolledBack = await api('POST', '/api/rollbacks', { name: 'app/new_name', revision: 2 })
  expect(((await rolledBack.json()) as { value: number }).value).toBe(2)
})

test.skipIf(!bin)("a URL that is not PostgreSQL's is refused before anything is touched", async () => {
  const cwd = tempDir()
  dirs.push(cwd)
  const out = await runFlagdInProcess(['storage', 'copy', '--to', 'mysql://x@y/z'], { cwd })
  expect(out.code).not.toBe(0)
  expect(out.stderr).toContain('postgres://')
  const empty = await runFlagdInProcess(['storage', 'copy', '--to', 'postgres://flagd@127.0.0.1:1/none'], { cwd })
  expect(empty.code).not.toBe(0)
  expect(empty.stderr).toContain('holds no flagd state')
})
