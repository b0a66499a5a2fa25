/**
 * A daemon with an admin for tests that need `flagd serve` as a process (an evaluation or sync port,
 * a browser, a signal): started in a temp directory on 127.0.0.1 port 0 with the admin of
 * FLAGD_ADMIN_USERNAME/PASSWORD, signed in, and an API caller. `daemonForFile` starts one per test
 * file in `beforeAll` and stops it and removes its directory in `afterAll`, even when a test failed.
 */

import { afterAll, beforeAll } from 'bun:test'
import { rmSync } from 'node:fs'
import { type Daemon, startDaemon } from './daemon.ts'
import { tempDir } from './test-app.ts'

/** The admin every such daemon is started with. */
export const ADMIN = { username: 'admin', password: 'admin-password' } as const

/** A running daemon, its directory, its admin's session token and an API caller. */
export interface AdminDaemon extends Daemon {
  readonly cwd: string
  /** The admin's session token. */
  readonly admin: string
  /** Calls the API with `token` (the admin's by default), `body` as JSON. */
  api(method: string, path: string, body?: unknown, token?: string): Promise<Response>
  /** Creates an API token with `permissions` and answers its secret. */
  token(name: string, permissions: string[]): Promise<string>
  /** Stops the daemon (SIGTERM, then waits for it) and removes its directory. */
  stop(): Promise<void>
}

/** Extra settings for the daemon; a function gets the daemon's directory (for socket paths). */
export type DaemonEnv = Record<string, string> | ((cwd: string) => Record<string, string>)

/** Starts `flagd serve ...args` with the admin and `env` in a fresh temp directory (see module comment). */
export async function startAdminDaemon(env: DaemonEnv = {}, args: string[] = []): Promise<AdminDaemon> {
  const cwd = tempDir()
  const extra = typeof env === 'function' ? env(cwd) : env
  let d: Daemon
  try {
    d = await startDaemon(cwd, args, { FLAGD_ADMIN_USERNAME: ADMIN.username, FLAGD_ADMIN_PASSWORD: ADMIN.password, ...extra })
  } catch (err) {
    rmSync(cwd, { recursive: true, force: true })
    throw err
  }
  const stop = async () => {
    d.proc.kill('SIGTERM')
    await d.proc.exited
    rmSync(cwd, { recursive: true, force: true })
  }
  const login = await fetch(`${d.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  })
  if (login.status !== 200) {
    await stop()
    throw new Error(`the admin could not sign in: ${login.status} ${await login.text()}`)
  }
  const admin = ((await login.json()) as { token: string }).token
  const api = (method: string, path: string, body?: unknown, token = admin) =>
    fetch(`${d.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
  return {
    ...d,
    cwd,
    admin,
    api,
    async token(name, permissions) {
      const made = await api('POST', '/api/tokens', { name, permissions })
      if (made.status !== 201) throw new Error(`no token ${name}: ${made.status} ${await made.text()}`)
      return ((await made.json()) as { token: string }).token
    },
    stop,
  }
}

/**
 * One daemon for the test file (see module comment); answers a getter that throws before `beforeAll`
 * has run. Hooks the file registers after this call run after the daemon has started.
 */
export function daemonForFile(env: DaemonEnv = {}, args: string[] = []): () => AdminDaemon {
  let daemon: AdminDaemon | undefined
  beforeAll(async () => {
    daemon = await startAdminDaemon(env, args)
  }, 60_000)
  afterAll(async () => {
    await daemon?.stop()
  })
  return () => {
    if (!daemon) throw new Error('the file daemon has not started')
    return daemon
  }
}
