/**
 * Runs a `flagd` command line inside the test process: the same command tree and `runCli` that
 * `src/main.ts` runs, with the working directory, environment, stdin, stdout and stderr of a
 * spawned `flagd` swapped in for the call. For CLI tests whose subject is a command, not the
 * process: a spawn of `bun src/main.ts` costs about a second of CPU, this a few milliseconds.
 * Calls run one at a time (they swap process-wide state); `runFlagd` in daemon.ts spawns a real one.
 */

import { flagdCommand } from '../../src/cli/flagd-command.ts'
import { runCli } from '../../src/cli/run-cli.ts'

type Write = typeof process.stdout.write
type Options = { cwd: string; env?: Record<string, string>; stdin?: string }

let queue: Promise<unknown> = Promise.resolve()

/** Runs `flagd ...args` in-process as `runFlagd` would spawn it: same options, same answer. */
export function runFlagdInProcess(args: string[], options: Options): Promise<{ stdout: string; stderr: string; code: number }> {
  const run = queue.then(() => runOnce(args, options))
  queue = run.catch(() => {})
  return run
}

function replaceEnv(next: Record<string, string>): () => void {
  const saved = { ...process.env }
  for (const key of Object.keys(process.env)) delete process.env[key]
  Object.assign(process.env, next)
  return () => {
    for (const key of Object.keys(process.env)) delete process.env[key]
    Object.assign(process.env, saved)
  }
}

/** Sets `isTTY` of a stream for the call (a spawned command's pipes are no terminal); returns the undo. */
function notTty(stream: { isTTY?: boolean }): () => void {
  const own = Object.getOwnPropertyDescriptor(stream, 'isTTY')
  Object.defineProperty(stream, 'isTTY', { value: false, configurable: true, writable: true })
  return () => {
    if (own) Object.defineProperty(stream, 'isTTY', own)
    else delete stream.isTTY
  }
}

async function runOnce(args: string[], options: Options): Promise<{ stdout: string; stderr: string; code: number }> {
  let stdout = ''
  let stderr = ''
  const text = (parts: unknown[]) => `${parts.map((p) => (typeof p === 'string' ? p : Bun.inspect(p))).join(' ')}\n`
  const saved = {
    cwd: process.cwd(),
    log: console.log,
    info: console.info,
    error: console.error,
    warn: console.warn,
    out: process.stdout.write,
    err: process.stderr.write,
    stdin: Bun.stdin,
  }
  const undo = [
    replaceEnv({ PATH: process.env.PATH ?? '', HOME: options.cwd, NO_COLOR: '1', ...options.env }),
    notTty(process.stdout),
    notTty(process.stderr),
    notTty(process.stdin),
  ]
  process.chdir(options.cwd)
  console.log = console.info = (...parts: unknown[]) => {
    stdout += text(parts)
  }
  console.error = console.warn = (...parts: unknown[]) => {
    stderr += text(parts)
  }
  process.stdout.write = ((chunk: string | Uint8Array) => {
    stdout += typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk)
    return true
  }) as Write
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += typeof chunk === 'string' ? chunk : new TextDecoder().decode(chunk)
    return true
  }) as Write
  const input = options.stdin ?? ''
  ;(Bun as { stdin: unknown }).stdin = { stream: () => new Response(input).body, text: async () => input }
  try {
    const code = await runCli(flagdCommand, args)
    return { stdout, stderr, code }
  } finally {
    ;(Bun as { stdin: unknown }).stdin = saved.stdin
    process.stdout.write = saved.out
    process.stderr.write = saved.err
    console.log = saved.log
    console.info = saved.info
    console.error = saved.error
    console.warn = saved.warn
    process.chdir(saved.cwd)
    for (const u of undo.reverse()) u()
  }
}
