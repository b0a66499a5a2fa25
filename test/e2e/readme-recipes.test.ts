/**
 * The README's recipes run as written (docs/development.md#readme-recipes): every shell block marked
 * `<!-- recipe -->` runs, in order, in one bash against a fresh daemon (port 0, temp dir), the way a
 * reader would: the admin from `FLAGD_ADMIN_*` as "First login" says, `flagd` on the PATH (the tests'
 * bundle, run as `bin/flagd` runs the source: the commands are the subject, not the script), the port
 * put where the README says 8080. Every curl call is recorded; each must answer 2xx unless a comment
 * after it promises otherwise (`# 409 CHANGE_REQUEST_REQUIRED`, `# 200 value: true`), and what the
 * comment promises is checked against the answer.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Daemon, FLAGD, startDaemon, TRANSPILER_CACHE } from '../helpers/daemon.ts'
import { expectedCalls, type PromisedOutcome, recipesOf, unmet } from '../helpers/readme-recipes.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(120_000)
const ROOT = join(import.meta.dir, '../..')
const README = readFileSync(join(ROOT, 'README.md'), 'utf8')
const tools = ['bash', 'curl', 'jq'].map((t) => Bun.which(t))
const missing = tools.includes(null)

let cwd = ''
let d: Daemon | undefined
beforeAll(async () => {
  if (missing) return
  cwd = tempDir()
  d = await startDaemon(cwd, [], { FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: 'choose-a-long-password' })
})
afterAll(async () => {
  d?.proc.kill('SIGTERM')
  await d?.proc.exited
  if (cwd) rmSync(cwd, { recursive: true, force: true })
})

test('the README marks its recipes, and every expectation comment follows a curl call', () => {
  const recipes = recipesOf(README)
  expect(recipes.length).toBeGreaterThanOrEqual(5)
  const calls = expectedCalls(recipes.join('\n'))
  expect(calls.length).toBeGreaterThanOrEqual(15)
  expect(calls.some((c) => c.status === 409)).toBe(true)
})

test.skipIf(missing)('every README recipe runs against a fresh daemon and answers what its comments promise', async () => {
  const daemon = d as Daemon
  const script = recipesOf(README)
    .join('\n')
    .replaceAll('http://127.0.0.1:8080', `http://127.0.0.1:${daemon.port}`)
    .replaceAll('localhost:8080', `127.0.0.1:${daemon.port}`)
  // curl, as the reader runs it, with each call's status and answer kept aside
  const calls = join(cwd, 'calls')
  const wrappers = join(cwd, 'wrappers')
  mkdirSync(calls)
  mkdirSync(wrappers)
  const wrapper = join(wrappers, 'curl')
  writeFileSync(
    wrapper,
    [
      '#!/bin/sh',
      'n=$(( $(cat "$RECIPE_CALLS/count" 2>/dev/null || echo 0) + 1 ))',
      'echo "$n" > "$RECIPE_CALLS/count"',
      '"$REAL_CURL" -o "$RECIPE_CALLS/$n.body" -w \'%{http_code}\' "$@" > "$RECIPE_CALLS/$n.status"',
      'rc=$?',
      'cat "$RECIPE_CALLS/$n.body" 2>/dev/null',
      'exit $rc',
      '',
    ].join('\n'),
  )
  chmodSync(wrapper, 0o755)
  // `flagd`, as bin/flagd runs it, but from the tests' bundle (test/helpers/flagd-bundle.ts): the
  // commands are the subject here; bin/flagd itself is tested in test/cli/cli-command.test.ts
  const flagd = join(wrappers, 'flagd')
  writeFileSync(flagd, `#!/bin/sh\nexec ${FLAGD.map((part) => `'${part}'`).join(' ')} "$@"\n`)
  chmodSync(flagd, 0o755)
  writeFileSync(join(cwd, 'recipes.sh'), `set -eo pipefail\n${script}\n`)
  const run = Bun.spawn(['bash', join(cwd, 'recipes.sh')], {
    cwd,
    env: {
      PATH: `${wrappers}:${join(ROOT, 'bin')}:${process.env.PATH ?? ''}`,
      HOME: cwd,
      NO_COLOR: '1',
      BUN_RUNTIME_TRANSPILER_CACHE_PATH: TRANSPILER_CACHE,
      REAL_CURL: tools[1] as string,
      RECIPE_CALLS: calls,
    },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
  expect({ code, err: code === 0 ? '' : `${err}\n${out.slice(-2000)}` }).toEqual({ code: 0, err: '' })

  const expected = expectedCalls(script)
  const made = existsSync(join(calls, 'count')) ? Number(readFileSync(join(calls, 'count'), 'utf8')) : 0
  expect(made).toBe(expected.length)
  const failures: string[] = []
  expected.forEach((want: PromisedOutcome, i) => {
    const status = Number(readFileSync(join(calls, `${i + 1}.status`), 'utf8'))
    const body = existsSync(join(calls, `${i + 1}.body`)) ? readFileSync(join(calls, `${i + 1}.body`), 'utf8') : ''
    const problem = unmet(want, status, body)
    if (problem) failures.push(`call ${i + 1} (${want.command.slice(0, 90)}): ${problem}`)
  })
  expect(failures).toEqual([])
})
