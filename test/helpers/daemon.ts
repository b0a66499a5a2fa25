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

/** Starts `flagd serve --port 0` and waits until it listens. */
export async function startDaemon(cwd: string, args: string[] = [], env: Record<string, string> = {}, command: string[] = FROM_SOURCE): Promise<Daemon> {
  const proc = Bun.spawn([...command, 'serve', '--port', '0', ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: cwd, NO_COLOR: '1', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let out = ''
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    for await (const chunk of stream) out += decoder.decode(chunk, { stream: true })
  }
  void collect(proc.stdout)
  void collect(proc.stderr)
  const deadline = Date.now() + 15_000
  while (Date.now() < deadline) {
    const m = /listening on http:\/\/([^:\s]+):(\d+)/.exec(out)
    if (m) return { proc, port: Number(m[2]), url: `http://127.0.0.1:${m[2]}`, output: () => out }
    if (proc.exitCode !== null) throw new Error(`daemon exited with ${proc.exitCode}: ${out}`)
    await Bun.sleep(20)
  }
  proc.kill('SIGKILL')
  throw new Error(`daemon did not start: ${out}`)
}
