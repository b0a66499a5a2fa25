/**
 * docs/operations.md#replicas, once-only work across replicas: with two replicas and one webhook, each audit entry
 * is delivered by one replica (not once per replica); when the replica doing it is killed, the other
 * takes over from the shared cursor and every later change is still delivered.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { type Daemon, startDaemon } from '../helpers/daemon.ts'
import { eventually } from '../helpers/eventually.ts'
import { findPostgresBin, type PostgresServer, startPostgres } from '../helpers/postgres.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(60_000)
const bin = findPostgresBin()
let server: PostgresServer | undefined
const daemons: Daemon[] = []
const dirs: string[] = []
const delivered: number[] = []
const receiver = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    delivered.push(((await req.json()) as { id: number }).id)
    return new Response('ok')
  },
})

beforeAll(async () => {
  if (!bin) return
  server = await startPostgres(bin)
  const url = await server.freshDatabase()
  const env = {
    FLAGD_STORAGE_POSTGRES_URL: url,
    FLAGD_ADMIN_USERNAME: 'admin',
    FLAGD_ADMIN_PASSWORD: 'admin-password',
    FLAGD_WEBHOOKS: JSON.stringify([
      { name: 'ci', url: `http://127.0.0.1:${receiver.port}/hook`, events: ['flag.*'], secret: 'a-shared-webhook-secret' },
    ]),
  }
  for (let i = 0; i < 2; i++) {
    const cwd = tempDir()
    dirs.push(cwd)
    daemons.push(await startDaemon(cwd, [], env))
  }
})

afterAll(async () => {
  for (const d of daemons) d.proc.kill('SIGKILL')
  await Promise.all(daemons.map((d) => d.proc.exited))
  await server?.destroy()
  receiver.stop(true)
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** Waits for `check` (a deadline of `ms` against a hang), naming what was delivered when it gives up. */
const until = (check: () => boolean, ms: number) =>
  eventually(check, { within: ms, every: 20, what: () => `delivered: ${delivered.join(',')}` })

test.skipIf(!bin)('one replica delivers each entry; killed, the other takes over and delivers what follows', async () => {
  const login = await fetch(`${daemons[1]!.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'admin-password' }),
  })
  const token = ((await login.json()) as { token: string }).token
  const create = (d: Daemon, name: string) =>
    fetch(`${d.url}/api/flags`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name, type: 'BOOLEAN' }),
    })
  for (let i = 0; i < 5; i++) expect((await create(daemons[i % 2]!, `before/f${i}`)).status).toBe(201)
  await until(() => delivered.length >= 5, 10_000)
  await Bun.sleep(500) // a second replica delivering too would show up now
  expect(delivered).toHaveLength(5)
  expect(new Set(delivered).size).toBe(5)

  const leader = daemons.find((d) => d.output().includes('now runs the once-only work'))!
  const other = daemons.find((d) => d !== leader)!
  expect(other.output()).not.toContain('now runs the once-only work')
  leader.proc.kill('SIGKILL')
  await leader.proc.exited
  for (let i = 0; i < 5; i++) expect((await create(other, `after/f${i}`)).status).toBe(201)
  await until(() => new Set(delivered).size >= 10, 15_000)
  await until(() => other.output().includes('now runs the once-only work'), 5000) // log lines are written in batches
  const audit = (await (await fetch(`${other.url}/api/audit?action=flag.`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
    id: number
  }[]
  expect([...new Set(delivered)].sort((a, b) => a - b)).toEqual(audit.map((e) => e.id).sort((a, b) => a - b))
})
