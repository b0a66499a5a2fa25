/** Test fixture files (migration documents named by intent). */

import { readFileSync } from 'node:fs'
import { join } from 'node:path'

export const FIXTURES = join(import.meta.dir, '../fixtures')

/** The parsed content of `test/fixtures/<name>`. */
export function fixture(name: string): any {
  return JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'))
}

/** The raw text of `test/fixtures/<name>`. */
export function fixtureText(name: string): string {
  return readFileSync(join(FIXTURES, name), 'utf8')
}

/** The path of `test/fixtures/<name>`. */
export function fixturePath(name: string): string {
  return join(FIXTURES, name)
}
