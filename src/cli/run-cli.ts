/**
 * Runs the command tree with citty and owns the conventions citty leaves open: `--help` on every
 * command, unknown flags refused (citty ignores them, so a typo would pass silently), `error: …`
 * on stderr, exit 0 on success, 1 on failure, 2 on a usage mistake.
 */

import { runCommand, showUsage, type ArgsDef, type CommandDef } from 'citty'
import { ConfigError } from '../config.ts'
import { AppError } from '../domain/errors.ts'
import { UsageError } from './usage-error.ts'

type AnyCommand = CommandDef<ArgsDef>

async function resolve<T>(value: T | (() => T | Promise<T>) | Promise<T> | undefined): Promise<T | undefined> {
  return typeof value === 'function' ? await (value as () => T | Promise<T>)() : await value
}

/** Follows positional words into subcommands; returns the chain and the remaining arguments. */
async function descend(root: AnyCommand, rawArgs: string[]): Promise<{ chain: AnyCommand[]; rest: string[] }> {
  const chain = [root]
  let rest = rawArgs
  for (;;) {
    const current = chain[chain.length - 1] as AnyCommand
    const subs = await resolve(current.subCommands)
    const index = rest.findIndex((a) => !a.startsWith('-'))
    if (!subs || index === -1) return { chain, rest }
    const name = rest[index] as string
    const sub = (subs as Record<string, AnyCommand>)[name]
    if (!sub) throw new UsageError(`unknown command "${name}"; try --help`)
    chain.push((await resolve(sub as never)) as unknown as AnyCommand)
    rest = [...rest.slice(0, index), ...rest.slice(index + 1)]
  }
}

async function checkFlags(command: AnyCommand, rest: string[]): Promise<void> {
  const args = ((await resolve(command.args)) ?? {}) as Record<string, { type?: string; alias?: string | string[] }>
  const known = new Set<string>()
  for (const [name, def] of Object.entries(args)) {
    known.add(name)
    known.add(name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase()))
    for (const alias of [def.alias ?? []].flat()) known.add(alias)
    if (def.type === 'boolean') known.add(`no-${name}`)
  }
  for (const arg of rest) {
    if (arg === '--') break
    if (!arg.startsWith('-') || arg === '-') continue
    const name = arg.replace(/^--?/, '').split('=')[0] as string
    if (!known.has(name)) throw new UsageError(`unknown option "${arg.split('=')[0]}"; try --help`)
  }
  const subs = await resolve(command.subCommands)
  if (subs && !command.run) throw new UsageError(`missing command: one of ${Object.keys(subs).join(', ')}; try --help`)
}

/** Runs the CLI and returns the exit code (the caller exits with it). */
export async function runCli(root: AnyCommand, rawArgs: string[]): Promise<number> {
  try {
    const { chain, rest } = await descend(root, rawArgs)
    const command = chain[chain.length - 1] as AnyCommand
    if (rest.includes('--help') || rest.includes('-h') || rawArgs.length === 0) {
      await showUsage(command, chain[chain.length - 2])
      return 0
    }
    await checkFlags(command, rest)
    await runCommand(root, { rawArgs })
    return 0
  } catch (err) {
    const usage = err instanceof UsageError || (err instanceof ConfigError && err.fromCommandLine) || (err as Error)?.name === 'CLIError'
    const message = err instanceof Error ? err.message : String(err)
    console.error(`error: ${message}`)
    if (!(usage || err instanceof AppError || err instanceof ConfigError || err instanceof Error)) console.error(err)
    return usage ? 2 : 1
  }
}
