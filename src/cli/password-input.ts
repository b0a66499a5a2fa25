/**
 * Reading a password without ever taking it as an argument: from standard input
 * (`--password-stdin`, for scripts) or from a prompt on the terminal with echo off.
 */

import { UsageError } from './usage-error.ts'

/** Reads all of standard input and drops one trailing newline. */
export async function readPasswordFromStdin(): Promise<string> {
  const text = await new Response(Bun.stdin.stream()).text()
  return text.replace(/\r?\n$/, '')
}

function promptHidden(question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin
    process.stderr.write(question)
    stdin.setRawMode(true)
    stdin.resume()
    let value = ''
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          finish()
          resolve(value)
          return
        }
        if (ch === '\u0003') {
          finish()
          reject(new UsageError('cancelled'))
          return
        }
        if (ch === '\u007f' || ch === '\b') value = [...value].slice(0, -1).join('')
        else if (ch >= ' ') value += ch
      }
    }
    const finish = () => {
      stdin.off('data', onData)
      stdin.setRawMode(false)
      stdin.pause()
      process.stderr.write('\n')
    }
    stdin.on('data', onData)
  })
}

/** Gets a new password: from stdin when asked, else by prompting twice on a terminal. */
export async function readNewPassword(fromStdin: boolean): Promise<string> {
  if (fromStdin) return readPasswordFromStdin()
  if (!process.stdin.isTTY) throw new UsageError('no terminal to prompt for the password on; pipe it in with --password-stdin')
  const first = await promptHidden('Password: ')
  const second = await promptHidden('Repeat password: ')
  if (first !== second) throw new UsageError('the passwords do not match')
  return first
}
