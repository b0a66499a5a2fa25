/** console-capture.ts: what others print with `console` becomes one JSON log line, and the undo restores it. */

import { afterEach, expect, test } from 'bun:test'
import { captureConsole } from '../../src/observability/console-capture.ts'
import { capturedLogger } from '../helpers/captured-logger.ts'

let undo: (() => void) | undefined
afterEach(() => {
  undo?.() // a failed assertion never leaves the test runner's console captured
  undo = undefined
})

const capturingLogger = () => capturedLogger({ level: 'debug' })

test('each console method becomes one line at its level, formatted as console would, with origin "console"', async () => {
  const { logger, lines } = capturingLogger()
  undo = captureConsole(logger)
  console.warn('bun:sql LISTEN %s failed, retrying: %s', '"flagd_commits"', 'Failed to connect')
  console.error('failed:', new Error('boom'))
  console.log({ a: 1, nested: { b: [1, 2] } })
  console.info('100% done, %d items')
  console.debug('details')
  await Bun.sleep(5)
  expect(lines.map((l) => [l.level, l.origin])).toEqual([
    [40, 'console'],
    [50, 'console'],
    [30, 'console'],
    [30, 'console'],
    [20, 'console'],
  ])
  expect(lines[0]?.msg).toBe('bun:sql LISTEN "flagd_commits" failed, retrying: Failed to connect')
  expect(String(lines[1]?.msg)).toStartWith('failed: Error: boom')
  expect(lines[2]?.msg).toBe('{ a: 1, nested: { b: [ 1, 2 ] } }')
  expect(lines[3]?.msg).toBe('100% done, %d items') // a % in the text is never read as a format
})

test('the undo puts the original methods back', () => {
  const before = [console.log, console.info, console.debug, console.warn, console.error, console.trace]
  undo = captureConsole(capturingLogger().logger)
  expect(console.warn).not.toBe(before[3] as typeof console.warn)
  undo()
  undo = undefined
  expect([console.log, console.info, console.debug, console.warn, console.error, console.trace]).toEqual(before)
})
