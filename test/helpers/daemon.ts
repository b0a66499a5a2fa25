/** Spawning `flagd` as a real process (the tests' bundle, or from source), for CLI and daemon tests. */

import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { flagdBundle } from './flagd-bundle.ts'

export { freePort } from './free-port.ts'

export const MAIN = join(import.meta.dir, '../../src/main.ts')

/** A daemon started with `serve`, its port and its output so far. */
export interface Daemon {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  port: number
  url: string
  output: () => string
}

/** How to start flagd from source, as a user of a clone does (`bun src/main.ts`). */
export const FROM_SOURCE = [process.execPath, MAIN]

/**
 * How tests start flagd unless they pass a command: the bundle built once per source
 * (`test/helpers/flagd-bundle.ts`), or from source with `TEST_FROM_SOURCE=1`. Awaited as this module
 * loads, before any test runs, so a build is never counted against a test's time-out.
 */
export const FLAGD: string[] = process.env.TEST_FROM_SOURCE === '1' ? FROM_SOURCE : [process.execPath, await flagdBundle()]

/**
 * Where spawned processes keep Bun's transpiled sources. Each gets its own HOME (the temp dir),
 * where Bun would otherwise keep that cache, so every spawn from source transpiled flagd anew;
 * one directory for all of them makes a spawn about a fifth cheaper in CPU. Bun keys its entries
 * by the source's content, so every checkout and run can share it.
 */
export const TRANSPILER_CACHE = join(tmpdir(), 'flagd-test-transpiler-cache')

/** The environment of a spawned flagd in `cwd`: nothing of the test's own but PATH, then `env`. */
function spawnEnv(cwd: string, env: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: cwd, NO_COLOR: '1', BUN_RUNTIME_TRANSPILER_CACHE_PATH: TRANSPILER_CACHE, ...env }
}

/** Runs a CLI command to completion. */
export async function runFlagd(args: string[], options: { cwd: string; env?: Record<string, string>; stdin?: string; command?: string[] }) {
  const proc = Bun.spawn([...(options.command ?? FLAGD), ...args], {
    cwd: options.cwd,
    env: spawnEnv(options.cwd, options.env),
    stdin: options.stdin === undefined ? 'ignore' : new TextEncoder().encode(options.stdin),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

/** Daemons started and not yet exited: `killLiveDaemons` (in `afterEach`) stops them even when a test failed. */
const live = new Set<Subprocess>()

/** Kills every daemon a test started that is still running. */
export async function killLiveDaemons(): Promise<void> {
  const procs = [...live]
  for (const proc of procs) proc.kill('SIGKILL')
  await Promise.all(procs.map((p) => p.exited))
}

// the last safety net: a test process that ends leaves no daemon behind
process.on('exit', () => {
  for (const proc of live) proc.kill('SIGKILL')
})

const LISTENING = /listening on http:\/\/\S+?:(\d+)/

/**
 * Starts `flagd serve` and waits until it listens. The daemon binds a port the kernel picks
 * (`--port 0`) and the port is read from its "listening on" line, so no other process can take the
 * port between a test choosing it and the daemon binding it. An explicit `--port` in `args` is used
 * as given. The line is logged at `info`: a test that sets a quieter log level must pass `--port`.
 */
export async function startDaemon(
  cwd: string,
  args: string[] = [],
  env: Record<string, string> = {},
  command: string[] = FLAGD,
): Promise<Daemon> {
  const portArg = args.indexOf('--port')
  const given = portArg === -1 ? undefined : Number(args[portArg + 1])
  const proc = Bun.spawn([...command, 'serve', ...(given === undefined ? ['--port', '0'] : []), ...args], {
    cwd,
    env: spawnEnv(cwd, env),
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  live.add(proc)
  void proc.exited.then(() => live.delete(proc))
  let out = ''
  let announced: (port: number) => void = () => {}
  const listening = new Promise<number>((resolve) => {
    announced = resolve
  })
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    for await (const chunk of stream) {
      if (out.length < 1_000_000) out += decoder.decode(chunk, { stream: true })
      const m = LISTENING.exec(out)
      if (m) announced(Number(m[1]))
    }
  }
  void collect(proc.stdout)
  void collect(proc.stderr)
  // settled by whichever comes first: the line, the process ending, or 15 s; nothing is left pending
  let timer: ReturnType<typeof setTimeout> | undefined
  const started = new Promise<number>((resolve, reject) => {
    void listening.then(resolve)
    void proc.exited.then((code) => reject(new Error(`daemon exited with ${code}: ${out}`)))
    timer = setTimeout(() => reject(new Error(`daemon did not start in 15 s: ${out}`)), 15_000)
  })
  started.catch(() => {}) // awaited below only when the port is not given; a later exit must not go unhandled
  try {
    const port = given ?? (await started)
    const url = `http://127.0.0.1:${port}`
    if (given !== undefined) await waitForHealth(url, proc, () => out)
    return { proc, port, url, output: () => out }
  } catch (err) {
    proc.kill('SIGKILL')
    throw err
  } finally {
    clearTimeout(timer)
  }
}

/** Waits until `/health` answers (a daemon started on a given port, at any log level). */
async function waitForHealth(url: string, proc: Subprocess, output: () => string): Promise<void> {
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`daemon exited with ${proc.exitCode}: ${output()}`)
    if (
      await fetch(`${url}/health`).then(
        (r) => r.status === 200,
        () => false,
      )
    )
      return
    await Bun.sleep(15)
  }
  throw new Error(`daemon did not start: ${output()}`)
}
