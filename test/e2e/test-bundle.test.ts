/**
 * The bundle the tests spawn flagd from (test/helpers/flagd-bundle.ts): a changed source makes a new
 * one. That a daemon from it, started elsewhere, serves what `src/` imports as files (the API
 * explorer's assets) is checked on the daemon `test/cli/serve.test.ts` starts for its first user.
 */

import { afterAll, expect, test } from 'bun:test'
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { sourceHash } from '../helpers/flagd-bundle.ts'
import { tempDir } from '../helpers/test-app.ts'

const dirs: string[] = []
const dir = () => {
  const d = tempDir()
  dirs.push(d)
  return d
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

test('the bundle is named after the source: a changed file under src/, package.json, bun.lock or tsconfig.json names another', () => {
  const root = dir()
  mkdirSync(join(root, 'src/ui'), { recursive: true })
  writeFileSync(join(root, 'src/main.ts'), 'export {}\n')
  writeFileSync(join(root, 'src/ui/page.tsx'), 'export {}\n')
  writeFileSync(join(root, 'package.json'), '{}\n')
  writeFileSync(join(root, 'bun.lock'), '{}\n')
  const first = sourceHash(root)
  const copy = dir()
  cpSync(root, copy, { recursive: true })
  expect(sourceHash(copy)).toBe(first) // the content names it, not where the checkout is
  const seen = new Set([first])
  for (const [file, text] of [
    ['src/ui/page.tsx', 'export const x = 1\n'],
    ['package.json', '{"a":1}\n'],
    ['bun.lock', '{"b":1}\n'],
    ['tsconfig.json', '{"compilerOptions":{}}\n'],
  ] as const) {
    writeFileSync(join(root, file), text)
    const next = sourceHash(root)
    expect(seen.has(next)).toBe(false)
    seen.add(next)
  }
})
