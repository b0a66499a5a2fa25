/**
 * One clock (docs/development.md#time): `src/system-clock.ts` is the only file of the daemon that reads
 * today's date; everything else is handed the clock `createApp` made. A component that read the wall
 * clock on its own would make a test that pins the date pass or fail with the calendar (a session
 * signed at the pinned date, checked at today's, expired once today moved on). The browser app is
 * left out: it shows times to a person and runs in their browser.
 */

import { expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative, resolve } from 'node:path'

const SRC = resolve(import.meta.dir, '../../src')
const THE_CLOCK = 'system-clock.ts'
const WALL_CLOCK = /\bDate\.now\b|\bnew Date\(\s*\)/

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  )
}

/** The lines of `text` that read the wall clock, comments left out. */
function wallClockReads(text: string): string[] {
  return text.split('\n').filter((line) => {
    const code = line.replace(/\/\/.*$/, '').replace(/^\s*\*.*$/, '')
    return WALL_CLOCK.test(code)
  })
}

test('only src/system-clock.ts reads the wall clock; elapsed time is performance.now()', () => {
  const readers: string[] = []
  let files = 0
  for (const file of sourceFiles(SRC)) {
    const name = relative(SRC, file)
    if (name === THE_CLOCK || name.startsWith('ui/app/')) continue
    files++
    for (const line of wallClockReads(readFileSync(file, 'utf8'))) readers.push(`${name}: ${line.trim()}`)
  }
  expect(files).toBeGreaterThan(150) // the scan found the sources
  expect(readers).toEqual([])
})

test('the check itself: a default parameter, a bare read and new Date() are caught; a date from a number is not', () => {
  expect(wallClockReads('export function f(now: () => number = Date.now) {}')).toHaveLength(1)
  expect(wallClockReads('const at = new Date().toISOString()')).toHaveLength(1)
  expect(wallClockReads('const t = Math.floor(Date.now() / 1000)')).toHaveLength(1)
  expect(wallClockReads('const d = new Date(now() - ttl)')).toHaveLength(0)
  expect(wallClockReads('// Date.now() is not read here')).toHaveLength(0)
})
