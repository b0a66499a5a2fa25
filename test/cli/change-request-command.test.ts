/**
 * `flagd change-request list|show|approve|apply` (docs/change-control.md#from-a-shell): a release
 * script's view of change requests, with the daemon running (its control socket) and stopped.
 */

import { afterAll, afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { runFlagdInProcess } from '../helpers/cli-in-process.ts'
import { killLiveDaemons, startDaemon } from '../helpers/daemon.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(30_000)
const dirs: string[] = []
afterEach(killLiveDaemons)
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

test('list, show, approve (as cli, never the author) and apply, while the daemon runs and while it is stopped', async () => {
  const cwd = tempDir()
  dirs.push(cwd)
  const d = await startDaemon(cwd, [], { FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: 'admin-password', FLAGD_ENVIRONMENT: 'prod' })
  const login = await fetch(`${d.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'admin-password' }),
  })
  const headers = { authorization: `Bearer ${((await login.json()) as { token: string }).token}`, 'content-type': 'application/json' }
  const api = async (method: string, path: string, body?: unknown) =>
    (await fetch(`${d.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })).json() as Promise<
      Record<string, unknown>
    >
  await api('POST', '/api/flags', { name: 'shop/limit', type: 'INTEGER', value: 1 })
  await api('PUT', '/api/environments/prod', { protected: true, requiredApprovals: 1 })
  const made = await api('POST', '/api/change-requests', {
    environment: 'prod',
    title: 'raise the limit',
    changes: [{ flag: 'shop/limit', set: { value: 5 } }],
  })
  const id = made.id as string

  const listed = await runFlagdInProcess(['change-request', 'list', '--state', 'open'], { cwd })
  expect(listed.stdout).toContain(id)
  expect(listed.stdout).toContain('raise the limit')
  expect((await runFlagdInProcess(['change-request', 'show', id], { cwd })).stdout).toContain('shop/limit: value 1 → 5')
  const approved = await runFlagdInProcess(['change-request', 'approve', id, '--comment', 'release 42'], { cwd })
  expect(approved.stdout).toContain('now approved')
  expect(((await api('GET', `/api/change-requests/${id}`)).approvals as { by: { name: string } }[])[0]?.by.name).toBe('cli')
  expect((await runFlagdInProcess(['change-request', 'apply', id], { cwd })).stdout).toContain(`applied ${id} in prod: shop/limit`)
  expect((await api('GET', '/api/flags/shop/limit')).value).toBe(5)
  const again = await runFlagdInProcess(['change-request', 'apply', id], { cwd })
  expect(again.code).toBe(1)
  expect(again.stderr).toContain('applied')

  // stopped: in-process over the data directory
  d.proc.kill('SIGTERM')
  expect(await d.proc.exited).toBe(0)
  const json = JSON.parse((await runFlagdInProcess(['change-request', 'list', '--json'], { cwd })).stdout) as {
    id: string
    state: string
  }[]
  expect(json).toEqual([expect.objectContaining({ id, state: 'applied' })])
  expect((await runFlagdInProcess(['change-request', 'show', 'cr_nothing'], { cwd })).code).toBe(1)
})
