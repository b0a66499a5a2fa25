/**
 * A pino logger for tests whose JSON lines are parsed as they are written, so a test can assert on
 * the fields of each line it caused.
 */

import { Writable } from 'node:stream'
import pino, { type LoggerOptions } from 'pino'

/** A logger (`options` as pino's) and the lines it has written so far, parsed. */
export function capturedLogger(options: LoggerOptions = {}) {
  const lines: Record<string, unknown>[] = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n')) if (line !== '') lines.push(JSON.parse(line))
      done()
    },
  })
  return { logger: pino(options, sink), lines }
}
