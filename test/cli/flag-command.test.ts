/**
 * `flagd flags archive|restore` (docs/api.md#archive) from a shell: in-process over a stopped data
 * directory, through the control socket of a running daemon, and their mistakes.
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

/** A data directory in a fresh working directory holding flag `shop/limit`. */
async function workingDir(): Promise<string> {
  const cwd = tempDir()
  dirs.push(cwd)
  const app = await createTestApp({}, { dataDir: join(cwd, 'data') })
  await app.app.services.flags.create(SYSTEM, { name: 'shop/limit', type: 'INTEGER', value: 1 })
  await app.close()
  return cwd
}

const exported = async (cwd: string) => JSON.parse((await runFlagdInProcess(['export'], { cwd })).stdout).flags['shop/limit']

test('flags archive and restore on a stopped data directory; archiving twice or an unknown flag exits 1', async () => {
  const cwd = await workingDir()
  const archived = await runFlagdInProcess(['flags', 'archive', 'shop/limit'], { cwd })
  expect(archived).toMatchObject({ code: 0 })
  expect(archived.stdout).toContain('archived flag shop/limit (revision 2)')
  expect(await exported(cwd)).toMatchObject({ archived: true, value: 1 })
  const again = await runFlagdInProcess(['flags', 'archive', 'shop/limit'], { cwd })
  expect(again.code).toBe(1)
  expect(again.stderr).toContain('already archived')
  expect((await runFlagdInProcess(['flags', 'archive', 'shop/none'], { cwd })).code).toBe(1)
  expect((await runFlagdInProcess(['flags', 'restore', 'shop/limit'], { cwd })).stdout).toContain('restored flag shop/limit (revision 3)')
  expect((await exported(cwd)).archived).toBeUndefined()
  expect((await runFlagdInProcess(['flags', 'archive'], { cwd })).code).toBe(2)
  const help = await runFlagdInProcess(['flags', '--help'], { cwd })
  expect(help.stdout).toContain('archive')
  expect(help.stdout).toContain('restore')
})

test('flags archive through a running daemon: OFREP answers the flag as unknown until it is restored', async () => {
  const cwd = await workingDir()
  const d = await startDaemon(cwd, [], { FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: 'admin-password' })
  const token = (await runFlagdInProcess(['token', 'add', 'app', '--permissions', 'flag:evaluate'], { cwd })).stdout.trim()
  const evaluate = () =>
    fetch(`${d.url}/ofrep/v1/evaluate/flags/shop/limit`, {
      method: 'POST',
      headers: { 'x-api-key': token, 'content-type': 'application/json' },
      body: '{}',
    })
  expect((await evaluate()).status).toBe(200)
  expect((await runFlagdInProcess(['flags', 'archive', 'shop/limit'], { cwd })).code).toBe(0)
  expect((await evaluate()).status).toBe(404)
  expect((await runFlagdInProcess(['flags', 'restore', 'shop/limit'], { cwd })).code).toBe(0)
  expect(((await (await evaluate()).json()) as { value: number }).value).toBe(1)
})
