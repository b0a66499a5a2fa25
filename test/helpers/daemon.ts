/** Spawning `flagd` from source as a real process, for CLI and daemon tests. */

import { join } from 'node:path'
import type { Subprocess } from 'bun'

export const MAIN = join(import.meta.dir, '../../src/main.ts')

/** A daemon started with `serve`, its port and its output so far. */
export interface Daemon {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  port: number
  url: string
  output: () => string
}

/** How to start flagd: from source by default, or a compiled binary. */
export const FROM_SOURCE = [process.execPath, MAIN]

/** Runs a CLI command to completion. */
export async function runFlagd(args: string[], options: { cwd: string; env?: Record<string, string>; stdin?: string; command?: string[] }) {
  const proc = Bun.spawn([...(options.command ?? FROM_SOURCE), ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', HOME: options.cwd, NO_COLOR: '1', ...options.env },
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

/** A port that was free a moment ago. */
export function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
  const port = probe.port as number
  probe.stop(true)
  return port
}

/** Starts `flagd serve` on a free port and waits until `/health` answers (whatever the log level). */
export async function startDaemon(
  cwd: string,
  args: string[] = [],
  env: Record<string, string> = {},
  command: string[] = FROM_SOURCE,
): Promise<Daemon> {
  const port = freePort()
  const proc = Bun.spawn([...command, 'serve', '--port', String(port), ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: cwd, NO_COLOR: '1', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  live.add(proc)
  void proc.exited.then(() => live.delete(proc))
  let out = ''
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    for await (const chunk of stream) if (out.length < 1_000_000) out += decoder.decode(chunk, { stream: true })
  }
  void collect(proc.stdout)
  void collect(proc.stderr)
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`daemon exited with ${proc.exitCode}: ${out}`)
    const up = await fetch(`${url}/health`).then(
      (r) => r.status === 200,
      () => false,
    )
    if (up) {
      // the start-up lines are written before the port opens, but the pipe may lag: give it a moment
      for (let i = 0; i < 50 && !out.includes('listening'); i++) await Bun.sleep(10)
      return { proc, port, url, output: () => out }
    }
    await Bun.sleep(15)
  }
  proc.kill('SIGKILL')
  throw new Error(`daemon did not start: ${out}`)
}
