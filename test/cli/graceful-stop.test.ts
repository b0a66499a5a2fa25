/** docs/operations.md: SIGTERM finishes in-flight requests and exits 0; a second signal exits at once. */

import { afterAll, afterEach, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Server } from 'bun'
import { freePort, killLiveDaemons, startDaemon } from '../helpers/daemon.ts'
import { eventually } from '../helpers/eventually.ts'
import { fixtureText } from '../helpers/fixtures.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(30_000)
afterEach(killLiveDaemons) // a failed test leaves no daemon running
let slow: Server<undefined>
const dirs: string[] = []
/** The import the remote holds: `arrived` once the daemon asked for the document, answered when `release` is called. */
let held: { arrived(): void; answer: Promise<void> } = { arrived: () => {}, answer: Promise.resolve() }
const releases: (() => void)[] = []
beforeAll(() => {
  // a remote that answers only when the test says, so an import from it is in flight when the signals come
  slow = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async () => {
      const { arrived, answer } = held
      arrived()
      await answer
      return new Response(fixtureText('valid-merge.json'))
    },
  })
})
afterAll(() => {
  for (const release of releases) release()
  slow.stop(true)
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

async function daemonWithSlowImport() {
  const cwd = tempDir()
  dirs.push(cwd)
  const d = await startDaemon(cwd, [], {
    FLAGD_ADMIN_USERNAME: 'admin',
    FLAGD_ADMIN_PASSWORD: 'admin-password',
    FLAGD_IMPORT_ALLOWED_HOSTS: '127.0.0.1',
  })
  const login = await fetch(`${d.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"username":"admin","password":"admin-password"}',
  })
  const { token } = (await login.json()) as { token: string }
  let release: () => void = () => {}
  let arrived: () => void = () => {}
  const reached = new Promise<void>((resolve) => (arrived = resolve))
  held = { arrived, answer: new Promise<void>((resolve) => (release = resolve)) }
  releases.push(release)
  const inFlight = fetch(`${d.url}/api/migrations`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ url: `http://127.0.0.1:${slow.port}/doc.json` }),
  })
  await reached // the import is in flight: the daemon waits for the remote
  return { d, inFlight, release }
}

test('SIGTERM lets the in-flight import finish, refuses new connections, and exits 0', async () => {
  const { d, inFlight, release } = await daemonWithSlowImport()
  d.proc.kill('SIGTERM')
  // new connections are refused while the import is still held (a guard against a hang, not a latency budget)
  await eventually(() =>
    fetch(`${d.url}/health`).then(
      () => false,
      () => true,
    ),
  )
  release()
  const res = await inFlight
  expect(res.status).toBe(200)
  expect(((await res.json()) as { summary: { created: number } }).summary.created).toBe(3)
  expect(await d.proc.exited).toBe(0)
})

test('Ctrl-C under bun run (a second signal within a second) is one graceful stop', async () => {
  const { d, inFlight, release } = await daemonWithSlowImport()
  d.proc.kill('SIGINT')
  await Bun.sleep(5)
  d.proc.kill('SIGINT')
  release()
  expect((await inFlight).status).toBe(200)
  expect(await d.proc.exited).toBe(0)
  expect(d.output()).not.toContain('exiting now')
})

test('a second signal more than a second after the first exits at once', async () => {
  const { d, inFlight } = await daemonWithSlowImport()
  const settled = inFlight.catch(() => 'connection closed') // the request dies with the process
  d.proc.kill('SIGTERM')
  await Bun.sleep(1100) // the rule is about time: a second signal more than a second later
  d.proc.kill('SIGINT')
  // a graceful stop would wait for the slow import and exit 0; the forced one does not wait
  expect(await d.proc.exited).not.toBe(0)
  await settled
})

test('a SIGTERM the moment /health first answers, while start-up goes on, still stops gracefully (exit 0)', async () => {
  const cwd = tempDir()
  dirs.push(cwd)
  // a given port: startDaemon returns as soon as /health answers, before the sync port and the drop
  // folder are started and the "listening" line is logged; the signal lands in that stretch or after it
  const d = await startDaemon(cwd, ['--port', String(freePort())], {
    FLAGD_SYNC_PORT: String(freePort()),
    FLAGD_IMPORT_WATCH_DIR: join(cwd, 'drop'),
  })
  d.proc.kill('SIGTERM')
  expect(await d.proc.exited).toBe(0)
  expect(d.output()).toContain('stopped')
})
