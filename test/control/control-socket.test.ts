/**
 * The control socket's versioned protocol: a CLI and a daemon of different protocol versions refuse
 * each other with a sentence saying what to run, arguments of the wrong shape are refused before any
 * service runs, and an `AppError` crosses the socket whole.
 */

import { afterEach, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import type { Server } from 'bun'
import { CONTROL_PROTOCOL, PROTOCOL_HEADER, VERSION_HEADER } from '../../src/control/control-protocol.ts'
import { connectControlSocket, controlSocketPath, serveControlSocket } from '../../src/control/control-socket.ts'
import { AppError, NotFoundError } from '../../src/domain/errors.ts'
import type { AdminApi } from '../../src/services/admin-service.ts'
import { tempDir } from '../helpers/test-app.ts'

const cleanups: (() => void)[] = []
afterEach(() => {
  for (const c of cleanups.splice(0)) c()
})

/** A daemon-side socket over a fake AdminApi that records what it was asked. */
function serveFake(): { dir: string; calls: unknown[][] } {
  const dir = tempDir('flagd-control-')
  const calls: unknown[][] = []
  const admin = {
    setPassword: async (...args: unknown[]) => {
      calls.push(args)
      return { id: 'usr_1', username: args[0] }
    },
    deleteUser: async (username: string) => {
      throw new NotFoundError(`no user named ${JSON.stringify(username)}`)
    },
  } as unknown as AdminApi
  const server: Server<undefined> = serveControlSocket(dir, admin, () => {})
  cleanups.push(() => {
    server.stop(true)
    rmSync(dir, { recursive: true, force: true })
  })
  return { dir, calls }
}

const post = (dir: string, method: string, body: string, headers: Record<string, string>) =>
  fetch(`http://flagd/admin/${method}`, { unix: controlSocketPath(dir), method: 'POST', body, headers })

test('a call with the same protocol reaches the service and answers its result', async () => {
  const { dir, calls } = serveFake()
  const result = await connectControlSocket(dir).setPassword('ops', 'a-long-password')
  expect(result).toEqual({ id: 'usr_1', username: 'ops' } as never)
  expect(calls).toEqual([['ops', 'a-long-password']])
})

test('an AppError crosses the socket with its code and message', async () => {
  const { dir } = serveFake()
  const error = await connectControlSocket(dir)
    .deleteUser('ghost')
    .catch((e: unknown) => e)
  expect(error).toBeInstanceOf(AppError)
  expect((error as AppError).code).toBe('NOT_FOUND')
  expect((error as AppError).message).toBe('no user named "ghost"')
})

test('a CLI without the protocol header (an earlier release) is refused with what to run', async () => {
  const { dir, calls } = serveFake()
  const res = await post(dir, 'setPassword', '["ops","pw-pw-pw-pw"]', { 'content-type': 'application/json' })
  const body = (await res.json()) as { error: { code: string; message: string } }
  expect(body.error.code).toBe('CONFLICT')
  expect(body.error.message).toContain('does not match the running daemon')
  expect(body.error.message).toContain('run the flagd binary the daemon was started from')
  expect(calls).toHaveLength(0)
})

test('a CLI of another protocol version is refused, and told both versions', async () => {
  const { dir, calls } = serveFake()
  const res = await post(dir, 'setPassword', '["ops","pw-pw-pw-pw"]', {
    [PROTOCOL_HEADER]: String(CONTROL_PROTOCOL + 1),
    [VERSION_HEADER]: '9.9.9',
  })
  const body = (await res.json()) as { error: { message: string } }
  expect(body.error.message).toContain(`release 9.9.9, control protocol ${CONTROL_PROTOCOL + 1}`)
  expect(body.error.message).toContain(`control protocol ${CONTROL_PROTOCOL})`)
  expect(calls).toHaveLength(0)
})

test('arguments of the wrong shape are refused before the service runs', async () => {
  const { dir, calls } = serveFake()
  const headers = { [PROTOCOL_HEADER]: String(CONTROL_PROTOCOL), [VERSION_HEADER]: 'x' }
  for (const body of ['["only-one"]', '[1, 2]', '{"username":"ops"}', 'not json']) {
    const res = await post(dir, 'setPassword', body, headers)
    expect(res.status).toBe(400)
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INVALID_REQUEST')
  }
  const unknown = await post(dir, 'dropEverything', '[]', headers)
  expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND')
  expect(calls).toHaveLength(0)
})

test('the CLI refuses a daemon that does not speak its protocol version', async () => {
  const dir = tempDir('flagd-control-')
  // an earlier daemon: answers without the protocol header
  const old = Bun.serve({ unix: controlSocketPath(dir), fetch: () => Response.json({ result: [] }) })
  cleanups.push(() => {
    old.stop(true)
    rmSync(dir, { recursive: true, force: true })
  })
  const error = await connectControlSocket(dir)
    .listUsers()
    .catch((e: unknown) => e)
  expect((error as Error).message).toContain('a release without a versioned control protocol')
  expect((error as Error).message).toContain('restart the daemon on this release')
})
