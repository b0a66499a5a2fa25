/**
 * Logging with pino: one JSON object per line when stdout is not a terminal (for journald and log
 * shippers), readable lines when it is (pino-pretty used as a synchronous stream, not a worker
 * transport, so it works in the compiled binary). Secrets are redacted by path as a safety net;
 * nothing logs them on purpose.
 */

import pino, { type Logger } from 'pino'
import pretty from 'pino-pretty'

export type { Logger }

/** Options of the logger. */
export interface LoggerOptions {
  level: 'debug' | 'info' | 'warn' | 'error' | 'silent'
  /** Human-readable output; defaults to whether stdout is a terminal. */
  pretty?: boolean
  destination?: NodeJS.WritableStream
}

const REDACT = ['password', 'currentPassword', 'token', 'secret', 'passwordHash', 'authorization', '*.password', '*.token', '*.secret', '*.authorization']

/** Creates the process logger. */
export function createLogger(options: LoggerOptions): Logger {
  const base = { level: options.level, base: { service: 'flagd' }, redact: { paths: REDACT, censor: '[redacted]' } }
  const human = options.pretty ?? Boolean(process.stdout.isTTY)
  if (human) {
    return pino(base, pretty({ sync: true, colorize: !process.env.NO_COLOR && Boolean(process.stdout.isTTY), ignore: 'pid,hostname,service', destination: options.destination ?? 1 }))
  }
  return pino({ ...base, timestamp: pino.stdTimeFunctions.isoTime }, options.destination ?? pino.destination({ fd: 1, sync: true }))
}
