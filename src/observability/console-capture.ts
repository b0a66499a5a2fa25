/**
 * While the daemon writes JSON logs, what anything else prints with `console` becomes a log line of
 * the same kind. Without it, a library's or the runtime's own warnings (bun:sql prints
 * `LISTEN … failed, retrying` on stderr throughout a database outage) would arrive in journald or a
 * log shipper as bare text among the JSON lines, where a parser drops them or chokes.
 */

import { formatWithOptions } from 'node:util'
import type { Logger } from 'pino'

type Level = 'debug' | 'info' | 'warn' | 'error'
const ROUTES = { log: 'info', info: 'info', debug: 'debug', warn: 'warn', error: 'error', trace: 'debug' } as const satisfies Record<
  string,
  Level
>
type Method = keyof typeof ROUTES

/**
 * Routes `console.log/info/debug/warn/error/trace` to `logger` at the matching level, each call one
 * line with `origin: "console"` and the arguments formatted as `console` would (without colours, on
 * one line). Answers the function that puts the original methods back.
 */
export function captureConsole(logger: Logger): () => void {
  const saved = new Map<Method, (...args: unknown[]) => void>()
  for (const method of Object.keys(ROUTES) as Method[]) {
    saved.set(method, console[method])
    const level = ROUTES[method]
    // '%s' so that a `%` in the text is never read as a format by the logger
    console[method] = (...args: unknown[]) =>
      logger[level]({ origin: 'console' }, '%s', formatWithOptions({ colors: false, breakLength: Number.POSITIVE_INFINITY }, ...args))
  }
  return () => {
    for (const [method, original] of saved) console[method] = original
  }
}
