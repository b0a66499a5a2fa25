/**
 * The executable's bytecode is laid out by what start-up uses (docs/performance.md#idle-memory-the-bytecode-laid-out-by-use):
 * every build passes the recorded profile, and the profile still names what start-up uses now. Without
 * it the idle daemon pages in about 4 MB more of its own bytecode.
 */

import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BYTECODE_ORDER_PATH, recordBytecodeOrder } from '../../scripts/record-bytecode-order.ts'

const ROOT = join(import.meta.dir, '../..')
const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
const work = mkdtempSync(join(tmpdir(), 'flagd-order-test-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** The functions a profile names (its `F` lines). */
const functions = (text: string) => new Set(text.split('\n').filter((line) => line.startsWith('F ')))

test('every compiled build lays its bytecode out by the recorded start-up profile', () => {
  const builds = Object.entries(scripts).flatMap(([name, line]) =>
    line
      .split('&&')
      .filter((command) => command.includes('--compile') && command.includes('--bytecode'))
      .map((command) => ({ name, command })),
  )
  expect(builds.length).toBeGreaterThanOrEqual(3)
  for (const { name, command } of builds)
    expect({ name, ordered: command.includes('--bytecode-order=scripts/bytecode-order.txt') }).toEqual({ name, ordered: true })
  expect(functions(readFileSync(BYTECODE_ORDER_PATH, 'utf8')).size).toBeGreaterThan(500)
})

// compiling the daemon and recording a start-up costs 15-20 s of a developer's run: .ci/run sets
// TEST_BUILD_CHECKS, so a stale profile is caught before anything lands
test.skipIf(!process.env.TEST_BUILD_CHECKS)(
  'the recorded profile names most of what start-up uses now (else: bun run build:order)',
  async () => {
    const build = (scripts.build as string).replace('dist/flagd', join(work, 'flagd')).split(' ').slice(1)
    const compiled = Bun.spawn([process.execPath, ...build], { cwd: ROOT, stdout: 'ignore', stderr: 'pipe' })
    expect({ code: await compiled.exited, stderr: compiled.exitCode === 0 ? '' : await new Response(compiled.stderr).text() }).toEqual({
      code: 0,
      stderr: '',
    })
    await recordBytecodeOrder(join(work, 'flagd'), join(work, 'order.txt'))
    const now = functions(readFileSync(join(work, 'order.txt'), 'utf8'))
    const recorded = functions(readFileSync(BYTECODE_ORDER_PATH, 'utf8'))
    const known = [...now].filter((f) => recorded.has(f)).length
    expect(known / now.size).toBeGreaterThan(0.75)
  },
  120_000,
)
