/**
 * createTestApp(): a real app on a fresh temp data directory, driven through `http.handle()` with
 * real Request objects. Password hashing is made cheaper than production so suites stay fast; one
 * test checks the production cost separately.
 */

import { afterAll, beforeAll, describe } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type App, type AppOptions, createApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config.ts'
import { PERMISSIONS } from '../../src/domain/permission.ts'
import { systemPrincipal } from '../../src/domain/principal.ts'
import { createLogger } from '../../src/observability/logger.ts'

export const CHEAP_HASH = { memoryCost: 1024, timeCost: 1 }
export const ADMIN = { username: 'admin', password: 'admin-password' }
/** The CLI's caller, for tests that call services directly. */
export const SYSTEM = { principal: systemPrincipal('cli'), requestId: 'test' }

/** A fresh temp directory, removed by the caller. */
export function tempDir(prefix = 'flagd-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** Options of a test request. */
export interface ReqOptions {
  body?: unknown
  rawBody?: string | Uint8Array
  token?: string
  headers?: Record<string, string>
  peer?: string
  /** The Host the request is sent to (its URL's host), `localhost` by default. */
  host?: string
}

/** A test response: status, headers, and the parsed JSON body (or text). */
export interface TestResponse {
  status: number
  headers: Headers
  body: any
  text: string
}

/** A running test app. */
export interface TestApp {
  app: App
  dataDir: string
  adminToken: string
  req(method: string, path: string, options?: ReqOptions): Promise<TestResponse>
  login(username: string, password: string): Promise<string>
  /** Creates a user with the given permissions and returns its id and a token. */
  userWith(permissions: readonly string[], name?: string): Promise<{ id: string; token: string; username: string; password: string }>
  /**
   * Closes the app and starts a new one over the same data directory (`env` for the new one); the
   * new one removes the directory on close when this one would have.
   */
  restart(env?: Record<string, string>): Promise<TestApp>
  close(): Promise<void>
}

let counter = 0

/** Starts an app with an admin holding every permission. */
export async function createTestApp(
  env: Record<string, string> = {},
  options: AppOptions & { dataDir?: string; ownsDataDir?: boolean } = {},
): Promise<TestApp> {
  const dataDir = options.dataDir ?? tempDir()
  // a directory made here is removed on close; one the caller gave is the caller's, unless it says so
  const ownsDataDir = options.ownsDataDir ?? !options.dataDir
  let app: App
  try {
    const config = await loadConfig({ cwd: dataDir, env, flags: { dataDir } })
    app = await createApp(config, { hashCost: CHEAP_HASH, logger: createLogger({ level: 'silent' }), ...options })
  } catch (err) {
    // a test of a refused configuration still leaves no directory behind
    if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true })
    throw err
  }
  if (app.services.users.count() === 0) await app.services.users.create(SYSTEM, { ...ADMIN, permissions: [...PERMISSIONS] })

  async function req(method: string, path: string, o: ReqOptions = {}): Promise<TestResponse> {
    const headers: Record<string, string> = { ...(o.headers ?? {}) }
    let body: string | Uint8Array | undefined
    if (o.rawBody !== undefined) body = o.rawBody
    else if (o.body !== undefined) {
      body = JSON.stringify(o.body)
      headers['content-type'] ??= 'application/json'
    }
    if (o.token) headers.authorization = `Bearer ${o.token}`
    const res = await app.http.handle(
      new Request(`http://${o.host ?? 'localhost'}${path}`, { method, headers, body }),
      o.peer ?? '127.0.0.1',
    )
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = JSON.parse(text)
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed, text }
  }

  async function login(username: string, password: string): Promise<string> {
    const res = await req('POST', '/api/login', { body: { username, password } })
    if (res.status !== 200) throw new Error(`login ${username} failed: ${res.status} ${res.text}`)
    return res.body.token as string
  }

  const adminToken = await login(ADMIN.username, ADMIN.password)
  return {
    app,
    dataDir,
    adminToken,
    req,
    login,
    async userWith(permissions, name) {
      const username = name ?? `user${++counter}`
      const password = `${username}-password`
      const res = await req('POST', '/api/users', { token: adminToken, body: { username, password, permissions } })
      if (res.status !== 201) throw new Error(`creating ${username} failed: ${res.status} ${res.text}`)
      return { id: res.body.id, username, password, token: await login(username, password) }
    },
    async restart(nextEnv = {}) {
      await app.close()
      return createTestApp(nextEnv, { ...options, dataDir, ownsDataDir })
    },
    async close() {
      await app.close()
      if (ownsDataDir) rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/**
 * A `describe` whose tests share one fresh app, made by `setup` before the group and closed by
 * `teardown` after it: groups never see each other's data (a fresh app costs a few milliseconds).
 */
export function scenarioGroup(setup: () => Promise<void>, teardown: () => Promise<void>): (name: string, body: () => void) => void {
  return (name, body) =>
    describe(name, () => {
      beforeAll(setup)
      afterAll(teardown)
      body()
    })
}
