/**
 * What every bench script does to a daemon before measuring it: find a free port, wait for it to
 * answer, log in, the migration document that seeds it with flags, and the contract floor's command;
 * and, for in-process rows, a real app in a temp directory.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { type App, createApp } from '../src/app.ts'
import { type Config, loadConfig } from '../src/config.ts'
import { createLogger } from '../src/observability/logger.ts'

/** A port nothing listens on right now (asked of the kernel). */
export function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
  const port = probe.port as number
  probe.stop(true)
  return port
}

/** A daemon of the bench: its process, its URL, and how long it took to answer `/health`. */
export interface BenchDaemon {
  proc: Subprocess
  url: string
  startMs: number
}

/**
 * Starts `binary serve` on `dir` (data in `dir/data`, the log in `dir/flagd.log`, as to journald)
 * at `port`, with an admin (`admin` / `bench-password`) and the `FLAGD_*` settings of `env`;
 * answers once `/health` does.
 */
export async function startBinary(binary: string, dir: string, port: number, env: Record<string, string> = {}): Promise<BenchDaemon> {
  const began = performance.now()
  const proc = Bun.spawn([binary, 'serve', '--port', String(port), '--data-dir', join(dir, 'data')], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '', FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: 'bench-password', ...env },
    stdout: Bun.file(join(dir, 'flagd.log')),
    stderr: 'inherit',
  })
  const url = `http://127.0.0.1:${port}`
  await waitFor(`${url}/health`, 30_000)
  return { proc, url, startMs: performance.now() - began }
}

/** Resolves once `url` answers 2xx (asked with `headers`); throws after `ms`. */
export async function waitFor(url: string, ms = 10_000, headers: Record<string, string> = {}): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (
      await fetch(url, { headers }).then(
        (r) => r.ok,
        () => false,
      )
    )
      return
    await Bun.sleep(2)
  }
  throw new Error(`${url} did not come up`)
}

/** Logs in and returns the headers of a JSON request with the session token. */
export async function loginHeaders(url: string, username: string, password: string): Promise<Record<string, string>> {
  const res = await fetch(`${url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username, password }),
  })
  if (res.status !== 200) throw new Error(`login at ${url} failed: ${res.status}`)
  return { authorization: `Bearer ${((await res.json()) as { token: string }).token}`, 'content-type': 'application/json' }
}

/** A migration document of `n` INTEGER flags named `<prefix>/gNN/fI`, in 20 groups. */
export function flagDocument(n: number, prefix: string) {
  const flags: Record<string, unknown> = {}
  for (let i = 0; i < n; i++)
    flags[`${prefix}/g${String(i % 20).padStart(2, '0')}/f${i}`] = {
      description: 'bench flag',
      type: 'INTEGER',
      defaultValue: 1,
      valueExists: true,
      value: i,
      minValue: 0,
      maxValue: 1_000_000_000,
    }
  return { environment: 'bench', version: '1.0.0', createdAt: new Date().toISOString(), flags }
}

/**
 * The command line of the contract's floor (`floor-server.ts`) answering `path` on `port` with the
 * bytes in `answerFile`, for `/health` or one flag's read (`headers` hold its credential, `etag` its
 * ETag); `undefined` for any other route, which the floor does not serve.
 */
export function floorCommand(
  port: number,
  answerFile: string,
  path: string,
  headers: Record<string, string>,
  etag: string | null,
): string[] | undefined {
  const credential = headers.authorization ?? headers['x-api-key'] ?? ''
  const mode =
    path === '/health'
      ? ['health']
      : path.startsWith('/api/flags/') && !path.includes('?')
        ? ['read', credential, path.slice('/api/flags/'.length), etag ?? '']
        : undefined
  return mode && [process.execPath, join(import.meta.dir, 'floor-server.ts'), String(port), answerFile, ...mode]
}

/** One throughput row of `bun run bench`: a path under load, its goal, and (for POSTs) the body. */
export type Scenario = (
  name: string,
  path: string,
  headers: Record<string, string>,
  goal: number,
  moonshot: string,
  p99Goal?: number,
  post?: string,
  base?: string,
) => Promise<void>

/** Writes one row of the bench's table (and of results.json). */
export type Row = (scenario: string, result: string, goal: string, met: boolean, raw: unknown) => void

/**
 * A real app in a fresh temp data directory, in this process (rows that time flagd's own work through
 * `http.handle`, without a socket), with a first admin; `close` stops it and removes the directory.
 */
export async function inProcessApp(prefix: string): Promise<{ app: App; config: Config; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const config = await loadConfig({
    cwd: dir,
    env: { FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: 'bench-password' },
    flags: { dataDir: dir },
  })
  const app = await createApp(config, { logger: createLogger({ level: 'silent' }) })
  return {
    app,
    config,
    async close() {
      await app.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
