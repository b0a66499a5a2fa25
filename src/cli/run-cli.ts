/**
 * Runs the command tree with citty and owns the conventions citty leaves open: `--help` on every
 * command (no colour codes unless on a terminal), unknown flags refused (citty ignores them, so a
 * typo would pass silently), missing arguments and commands named in flagd's words, `error: …` on
 * stderr, exit 0 on success, 1 on failure, 2 on a usage mistake (a missing command included, at any
 * level).
 */

import { type ArgsDef, type CommandDef, renderUsage, runCommand } from 'citty'
import { ConfigError } from '../config.ts'
import { AppError } from '../domain/errors.ts'
import { closestSpelling } from '../domain/spelling-suggestion.ts'
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
    // an own entry only: `flagd toString` names no command, not an object's built-in
    const sub = Object.hasOwn(subs, name) ? (subs as Record<string, AnyCommand>)[name] : undefined
    if (!sub) {
      const closest = closestSpelling(name, Object.keys(subs))
      throw new UsageError(`unknown command "${name}"; ${closest === undefined ? 'try --help' : `did you mean ${closest}?`}`)
    }
    chain.push((await resolve(sub as never)) as unknown as AnyCommand)
    rest = [...rest.slice(0, index), ...rest.slice(index + 1)]
  }
}

const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g') // colour codes citty prints

/** Prints a command's usage: to stdout when asked for, to stderr beside an error; plain text in pipes. */
async function printUsage(chain: AnyCommand[], stream: NodeJS.WriteStream): Promise<void> {
  const text = await renderUsage(chain[chain.length - 1] as AnyCommand, chain[chain.length - 2])
  stream.write(`${stream.isTTY && !process.env.NO_COLOR ? text : text.replace(ANSI, '')}\n`)
}

type ArgSpec = { type?: string; alias?: string | string[]; required?: boolean; default?: unknown; valueHint?: string }

/** Refuses a command line that lacks a required positional argument, in flagd's words. */
function checkPositionals(chain: AnyCommand[], args: Record<string, ArgSpec>, rest: string[]): void {
  const takesValue = new Set(
    Object.entries(args)
      .filter(([, a]) => a.type === 'string')
      .flatMap(([name, a]) => [name, ...[a.alias ?? []].flat()]),
  )
  let given = 0
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string
    if (arg === '--') {
      given += rest.length - i - 1
      break
    }
    if (arg.startsWith('-') && arg !== '-') {
      if (!arg.includes('=') && takesValue.has(arg.replace(/^--?/, ''))) i++
      continue
    }
    given++
  }
  const required = Object.entries(args).filter(([, a]) => a.type === 'positional' && a.required !== false && a.default === undefined)
  const missing = required.slice(given).map(([name]) => `<${name}>`)
  if (missing.length === 0) return
  const names = chain.map((c) => (c.meta as { name?: string } | undefined)?.name ?? '').join(' ')
  throw new UsageError(
    `missing ${missing.join(' ')}: usage is ${names} ${required.map(([name]) => `<${name}>`).join(' ')} [options]; try --help`,
  )
}

async function checkFlags(chain: AnyCommand[], rest: string[]): Promise<void> {
  const command = chain[chain.length - 1] as AnyCommand
  const args = ((await resolve(command.args)) ?? {}) as Record<string, ArgSpec>
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
    if (!known.has(name)) {
      const closest = closestSpelling(name, known)
      throw new UsageError(`unknown option "${arg.split('=')[0]}"; ${closest === undefined ? 'try --help' : `did you mean --${closest}?`}`)
    }
  }
  const subs = await resolve(command.subCommands)
  if (subs && !command.run) throw new UsageError(`missing command: one of ${Object.keys(subs).join(', ')}`, chain)
  checkPositionals(chain, args, rest)
}

/** Runs the CLI and returns the exit code (the caller exits with it). */
export async function runCli(root: AnyCommand, rawArgs: string[]): Promise<number> {
  try {
    const { chain, rest } = await descend(root, rawArgs)
    if (rest.includes('--help') || rest.includes('-h')) {
      await printUsage(chain, process.stdout)
      return 0
    }
    await checkFlags(chain, rest)
    await runCommand(root, { rawArgs })
    return 0
  } catch (err) {
    const usage = err instanceof UsageError || (err instanceof ConfigError && err.fromCommandLine) || (err as Error)?.name === 'CLIError'
    const message = err instanceof Error ? err.message : String(err)
    console.error(`error: ${message}`)
    if (err instanceof UsageError && err.usageOf) await printUsage(err.usageOf as AnyCommand[], process.stderr)
    if (!(usage || err instanceof AppError || err instanceof ConfigError || err instanceof Error)) console.error(err)
    return usage ? 2 : 1
  }
}
