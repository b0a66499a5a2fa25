/**
 * `flagd change-request create` (docs/change-control.md#from-a-shell), run in-process: the command a
 * shell user is sent to by a protected environment's 409, with the daemon running (its control
 * socket) and stopped (the data directory itself).
 */

import { afterEach, expect, spyOn, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { changeRequestCommand } from '../../src/cli/change-request-command.ts'
import { runCli } from '../../src/cli/run-cli.ts'
import { controlSocketPath, serveControlSocket } from '../../src/control/control-socket.ts'
import { createAdminService } from '../../src/services/admin-service.ts'
import { createTestApp, SYSTEM, type TestApp, tempDir } from '../helpers/test-app.ts'

const cleanups: (() => Promise<void> | void)[] = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A data directory with flag `f` = 1 and a protected `production`; the app that made it, still open. */
async function protectedData(): Promise<{ dir: string; app: TestApp }> {
  const dir = tempDir()
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  const app = await createTestApp({ FLAGD_ENVIRONMENT: 'production' }, { dataDir: dir })
  await app.app.services.flags.create(SYSTEM, { name: 'f', type: 'INTEGER', value: 1 })
  await app.app.services.environments.put(SYSTEM, 'production', { protected: true, requiredApprovals: 1 })
  return { dir, app }
}

/** Runs `flagd change-request create` on `dir` into production with `title` and `args`. */
const create = (dir: string, title: string, ...args: string[]) =>
  flagd(['create', '--data-dir', dir, '--environment', 'production', '--title', title, ...args])

/** Runs `flagd change-request …` in this process; its exit code, stdout and stderr. */
async function flagd(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = []
  const err: string[] = []
  const log = spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')))
  const error = spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')))
  try {
    const code = await runCli(changeRequestCommand, args)
    return { code, out: out.join('\n'), err: err.join('\n') }
  } finally {
    log.mockRestore()
    error.mockRestore()
  }
}

test('with the daemon stopped: opens a request over the data directory, which then waits for an approval', async () => {
  const { dir, app } = await protectedData()
  await app.close()
  const made = await create(dir, 'raise f', '--flag', 'f', '--set', 'value=5')
  // the daemon that made the directory served production as its default; this shell's config names none
  expect(made.code).toBe(0)
  expect(made.err).toBe(
    'flagd: the default environment here is production, the one the daemon last served; config names development, which becomes the default when the daemon next starts',
  )
  const id = /opened (cr_\S+) in production: now open/.exec(made.out)?.[1] as string
  expect(id).toBeDefined()
  const shown = JSON.parse((await flagd(['show', id, '--data-dir', dir, '--json'])).out)
  expect(shown).toMatchObject({ state: 'open', author: { name: 'cli' }, changes: [{ flag: 'f', set: { value: 5 } }] })
  // the command line is its author: it does not approve it too
  const own = await flagd(['approve', id, '--data-dir', dir])
  expect(own.code).toBe(1)
  expect(own.err).toContain('author')
})

test('with the daemon running: through its control socket; several changes as JSON; a deletion', async () => {
  const { dir, app } = await protectedData()
  const socket = serveControlSocket(dir, createAdminService(app.app.services), () => {})
  cleanups.push(async () => {
    socket.stop(true)
    rmSync(controlSocketPath(dir), { force: true })
    await app.close()
  })
  const changes = JSON.stringify([{ flag: 'f', set: { enabled: false, defaultValue: 3 } }])
  const made = await create(dir, 'off', '--changes', changes, '--json')
  expect(made.code).toBe(0)
  const request = JSON.parse(made.out)
  expect(app.app.services.changeRequests.get(SYSTEM.principal, request.id)).toMatchObject({ state: 'open', title: 'off' })
  const deletion = await create(dir, 'retire f', '--flag', 'f', '--delete')
  expect(deletion.code).toBe(0)
  expect(app.app.services.changeRequests.list(SYSTEM.principal, { flag: 'f' })[0]?.changes).toEqual([{ flag: 'f', set: {}, delete: true }])
})

test('mistakes are refused with a sentence, and nothing is opened', async () => {
  const { dir, app } = await protectedData()
  await app.close()
  for (const [args, says] of [
    [[], '--flag'],
    [['--flag', 'f'], '--set'],
    [['--flag', 'f', '--set', 'value'], 'field=value'],
    [['--flag', 'f', '--set', 'value=5', '--delete'], '--delete'],
    [['--changes', 'not json'], 'JSON'],
    [['--flag', 'f', '--set', 'name=g'], 'changes[0].set.name'],
    [['--flag', 'nope', '--set', 'value=5'], 'nope'],
  ] as const) {
    const refused = await create(dir, 't', ...args)
    expect(refused.code).not.toBe(0)
    expect(refused.err).toContain(says)
  }
  expect(JSON.parse((await flagd(['list', '--data-dir', dir, '--json'])).out)).toEqual([])
})
