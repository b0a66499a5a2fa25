/**
 * Logging with pino: one JSON object per line when stdout is not a terminal (for journald and log
 * shippers), readable lines when it is (pino-pretty used as a synchronous stream, not a worker
 * transport, so it works in the compiled binary). Secrets are redacted by path as a safety net;
 * nothing logs them on purpose.
 *
 * The one line per request is the exception: measured in the benchmark, pino cost about 30% of read
 * throughput for it, so `access()` only records the request's fields, and the line is formatted with
 * the same fields and shape pino writes when its batch is written.
 */

import pino, { type DestinationStream, type Logger } from 'pino'
import type PinoPretty from 'pino-pretty'
import { captureConsole } from './console-capture.ts'

export type { Logger }

/** Options of the logger. */
export interface LoggerOptions {
  level: 'debug' | 'info' | 'warn' | 'error' | 'silent'
  /** Human-readable output; defaults to whether stdout is a terminal. */
  pretty?: boolean
  destination?: NodeJS.WritableStream
}

/**
 * The fields of one access-log line. `requestId`, `userId` and `tokenId` are safe JSON string contents by
 * construction (the request id is checked or made by flagd; ids are URL-safe), so only the
 * method and the path are escaped when needed.
 */
export interface AccessEvent {
  method: string
  path: string
  status: number
  seconds: number
  requestId: string
  userId: string | undefined
  tokenId: string | undefined
  /** When the answer was ready, in ms since the epoch (the line's `time`). */
  at: number
}

/** The process logs. */
export interface Logging {
  logger: Logger
  /** Writes the access-log line of one request (at level info). */
  access(event: AccessEvent): void
  /** Writes out anything buffered (on shutdown). */
  flush(): Promise<void>
  /**
   * When the lines are JSON, makes what others print with `console` JSON lines too (the daemon
   * calls it; see console-capture.ts); answers the function that undoes it.
   */
  captureConsole(): () => void
}

// Top-level paths only: wildcard paths doubled the cost of every line, and nothing nested is logged.
const REDACT = ['password', 'currentPassword', 'token', 'secret', 'passwordHash', 'authorization']
const LEVELS = { debug: 20, info: 30, warn: 40, error: 50, silent: Infinity }

/**
 * Logs written line by line through `logger` itself (a terminal, a test's stream): nothing is
 * buffered, and an access line has the same fields as the batched JSON one.
 */
export function unbufferedLogging(logger: Logger, accessOn = true): Logging {
  return {
    logger,
    access: ({ method, path, status, seconds, requestId, userId, tokenId }) =>
      accessOn &&
      logger.info({ method, path, status, durationMs: Math.round(seconds * 10000) / 10, requestId, userId, tokenId }, 'request'),
    flush: async () => {},
    captureConsole: () => () => {}, // readable lines or a test's stream: console output is already fine there
  }
}

/** Creates the process logs. */
export function createLogging(options: LoggerOptions): Logging {
  const base = { level: options.level, base: { service: 'flagd' }, redact: { paths: REDACT, censor: '[redacted]' } }
  const human = options.pretty ?? Boolean(process.stdout.isTTY)
  const accessOn = LEVELS[options.level] <= LEVELS.info
  if (human || options.destination) {
    // loaded only for a terminal: a daemon writing JSON never needs it in memory
    const pretty = human ? (require('pino-pretty') as typeof PinoPretty) : undefined
    const stream: DestinationStream = pretty
      ? pretty({
          sync: true,
          colorize: !process.env.NO_COLOR && Boolean(process.stdout.isTTY),
          ignore: 'pid,hostname,service',
          destination: options.destination ?? 1,
        })
      : (options.destination as DestinationStream)
    return unbufferedLogging(pino(base, stream), accessOn)
  }
  // Every line (pino's and the access log's) is gathered in memory, in order, and written to one
  // Bun FileSink every 200 ms, on shutdown, or when 512 lines are waiting: one native write per
  // batch instead of one per request (the benchmark's profile showed the per-line write at ~8% of a
  // request). Access lines wait as their fields and are formatted with the batch, in one tight loop
  // (the request path only records them: measured, about 4% of a read). A kill -9 may lose the
  // last lines, never state.
  const sink = Bun.stdout.writer({ highWaterMark: 256 * 1024 })
  let pending: (string | AccessEvent)[] = []
  const drainLines = () => {
    if (pending.length === 0) return
    const lines = pending
    pending = []
    let text = ''
    for (const line of lines) text += typeof line === 'string' ? line : accessLine(line)
    sink.write(text)
  }
  const enqueue = (line: string | AccessEvent) => {
    pending.push(line)
    if (pending.length >= 512) drainLines()
  }
  const flusher = setInterval(() => {
    drainLines()
    void sink.flush()
  }, 200)
  flusher.unref()
  const logger = pino({ ...base, timestamp: pino.stdTimeFunctions.isoTime }, { write: enqueue })
  return {
    logger,
    access(e) {
      if (accessOn) enqueue(e) // kept as it is until the batch is written: the caller hands it over
    },
    flush: async () => {
      drainLines()
      await sink.flush()
    },
    captureConsole: () => captureConsole(logger),
  }
}

// one timestamp string per millisecond, not per line
let isoAt = 0
let iso = ''

/**
 * The access line of one request, with the fields and shape pino writes. `requestId`, `userId` and
 * `tokenId` are safe JSON string contents by construction; the method and path are escaped when needed.
 */
function accessLine(e: AccessEvent): string {
  if (e.at !== isoAt) {
    isoAt = e.at
    iso = new Date(e.at).toISOString()
  }
  const method = METHODS.has(e.method) ? `"${e.method}"` : JSON.stringify(e.method)
  const path = PLAIN.test(e.path) ? `"${e.path}"` : JSON.stringify(e.path)
  const user = e.userId !== undefined ? `,"userId":"${e.userId}"` : e.tokenId !== undefined ? `,"tokenId":"${e.tokenId}"` : ''
  const ms = Math.round(e.seconds * 10000) / 10
  return `{"level":30,"time":"${iso}","service":"flagd","method":${method},"path":${path},"status":${e.status},"durationMs":${ms},"requestId":"${e.requestId}"${user},"msg":"request"}\n`
}

/** Printable ASCII without quote or backslash: a JSON string's contents as they are. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/** Just the pino logger (for tests and tools that need no access log). */
export function createLogger(options: LoggerOptions): Logger {
  return createLogging(options).logger
}
