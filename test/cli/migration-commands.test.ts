/** `flagd export`, `flagd import`, `flagd validate` as processes. */

import { afterAll, afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runFlagdInProcess } from '../helpers/cli-in-process.ts'
import { killLiveDaemons, startDaemon } from '../helpers/daemon.ts'
import { FIXTURES } from '../helpers/fixtures.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(30_000)
afterEach(killLiveDaemons) // a failed test leaves no daemon running
const cwd = tempDir()
afterAll(() => rmSync(cwd, { recursive: true, force: true }))

test('validate names a flagd document as one, with its segments; a dangling $ref is refused as at import', async () => {
  const testkit = JSON.parse(
    readFileSync(join(import.meta.dir, '../fixtures/openfeature/flagd-testbed/evaluator/flags/testkit-flags.json'), 'utf8'),
  )
  const whole = join(cwd, 'testkit.json')
  writeFileSync(whole, JSON.stringify(testkit))
  const refused = await runFlagdInProcess(['validate', whole], { cwd })
  expect(refused.code).toBe(1)
  expect(refused.stderr).toContain('segment nonexistent_evaluator does not exist')
  delete testkit.flags['ref-to-nonexistent-evaluator-flag']
  writeFileSync(whole, JSON.stringify(testkit))
  const ok = await runFlagdInProcess(['validate', whole], { cwd })
  expect(ok.code).toBe(0)
  expect(ok.stdout).toContain('is valid: an OpenFeature flagd document with 59 flags and 1 segment')
})

test('validate: exit 0 for a valid file, 1 listing every problem otherwise, no data dir touched', async () => {
  const ok = await runFlagdInProcess(['validate', join(FIXTURES, 'flagflow-1.7-export.json')], { cwd })
  expect(ok.code).toBe(0)
  expect(ok.stdout).toContain('is valid: 7 flags')
  const bad = await runFlagdInProcess(['validate', join(FIXTURES, 'invalid-three-errors.json')], { cwd })
  expect(bad.code).toBe(1)
  expect(bad.stderr).toContain('3 problem(s)')
  for (const field of ['flags.app/max_retries.value', 'flags.app/mode.type', 'flags.ui/banner.regexPattern'])
    expect(bad.stderr).toContain(field)
  expect((await runFlagdInProcess(['validate', join(FIXTURES, 'not-json.json')], { cwd })).stderr).toContain('not valid JSON')
  expect((await runFlagdInProcess(['validate', 'missing.json'], { cwd })).stderr).toContain('no such file')
  expect((await runFlagdInProcess(['validate'], { cwd })).code).toBe(2)
  expect(() => readFileSync(join(cwd, 'data', 'flagd.json'))).toThrow()
})

test('validate and import refuse a file nested deeper than 32 levels, before parsing it', async () => {
  const deep = join(cwd, 'deep.json')
  writeFileSync(deep, `{"environment":"x","flags":{},"pad":${'['.repeat(1024 * 1024)}`)
  for (const args of [
    ['validate', deep],
    ['import', deep],
  ]) {
    const refused = await runFlagdInProcess(args, { cwd })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain(`${deep} is nested deeper than 32 levels`)
  }
})

test('admin commands refuse a data directory that does not exist, creating nothing', async () => {
  const elsewhere = tempDir()
  try {
    for (const args of [
      ['import', join(FIXTURES, 'valid-merge.json')],
      ['export'],
      ['user', 'list'],
      ['user', 'passwd', 'x', '--password-stdin'],
    ]) {
      const res = await runFlagdInProcess(args, { cwd: elsewhere, stdin: 'some-password' })
      expect(res.code).toBe(1)
      expect(res.stderr).toContain(`no flagd data directory at ${join(elsewhere, 'data')}`)
      expect(res.stderr).toContain('--data-dir')
    }
    mkdirSync(join(elsewhere, 'data'))
    writeFileSync(join(elsewhere, 'data', 'notes.txt'), 'something else')
    const notState = await runFlagdInProcess(['user', 'add', 'x', '--password-stdin'], { cwd: elsewhere, stdin: 'some-password' })
    expect(notState.code).toBe(1)
    expect(notState.stderr).toContain('holds no flagd state')
    expect(readdirSync(join(elsewhere, 'data'))).toEqual(['notes.txt'])
  } finally {
    rmSync(elsewhere, { recursive: true, force: true })
  }
})

test('user add creates a data directory that does not exist yet (0700), as serve does, and says so', async () => {
  const fresh = tempDir()
  try {
    const res = await runFlagdInProcess(['user', 'add', 'first', '--password-stdin'], { cwd: fresh, stdin: 'first-password' })
    expect(res.stderr).toContain(`creating the data directory ${join(fresh, 'data')} with a new, empty flagd state`)
    expect(res.code).toBe(0)
    expect(statSync(join(fresh, 'data')).mode & 0o777).toBe(0o700)
    const listed = await runFlagdInProcess(['user', 'list', '--json'], { cwd: fresh })
    expect(JSON.parse(listed.stdout).map((u: { username: string }) => u.username)).toEqual(['first'])
  } finally {
    rmSync(fresh, { recursive: true, force: true })
  }
})

test('user add initialises an existing, empty data directory (a fresh clone has data/.gitkeep), and says so', async () => {
  mkdirSync(join(cwd, 'data'))
  writeFileSync(join(cwd, 'data', '.gitkeep'), '')
  const res = await runFlagdInProcess(['user', 'add', 'first', '--password-stdin'], { cwd, stdin: 'first-password' })
  expect(res.code).toBe(0)
  expect(res.stderr).toContain('initialising a new, empty flagd state')
})

test('import (dry run, real, keep) and export on a stopped daemon data directory', async () => {
  const file = join(FIXTURES, 'valid-merge.json')
  const dry = await runFlagdInProcess(['import', file, '--dry-run'], { cwd })
  expect(dry.code).toBe(0)
  expect(dry.stdout).toContain('dry run: would apply: 3 created')
  const real = await runFlagdInProcess(['import', file, '--json'], { cwd })
  expect(JSON.parse(real.stdout).summary.created).toBe(3)
  const again = await runFlagdInProcess(['import', file, '--mode', 'replace', '--values', 'keep'], { cwd })
  expect(again.stdout).toContain('0 created, 0 updated, 0 deleted, 3 unchanged')
  const out = await runFlagdInProcess(['export', '--out', 'out.json'], { cwd })
  expect(out.code).toBe(0)
  const exported = JSON.parse(readFileSync(join(cwd, 'out.json'), 'utf8'))
  expect(Object.keys(exported.flags)).toEqual(['app/max_retries', 'app/new_checkout', 'ui/theme'])
  const stdout = await runFlagdInProcess(['export'], { cwd })
  expect(JSON.parse(stdout.stdout).flags).toEqual(exported.flags)
  // flagd's own format, to a file and to stdout; a valid document to import, which changes nothing
  // here: a flag exactly as the export says it is read as the flag it came from
  const flagd = await runFlagdInProcess(['export', '--format', 'flagd', '--out', 'flagd.json'], { cwd })
  expect([flagd.code, flagd.stderr]).toEqual([0, expect.stringContaining('wrote 3 flags to flagd.json')])
  const document = JSON.parse(readFileSync(join(cwd, 'flagd.json'), 'utf8'))
  expect(document.$schema).toBe('https://flagd.dev/schema/v0/flags.json')
  expect(Object.keys(document.flags)).toEqual(['app/max_retries', 'app/new_checkout', 'ui/theme'])
  expect(JSON.parse((await runFlagdInProcess(['export', '--format', 'flagd'], { cwd })).stdout)).toEqual(document)
  const back = await runFlagdInProcess(['import', 'flagd.json', '--dry-run'], { cwd })
  expect([back.code, back.stdout]).toEqual([0, expect.stringContaining('0 created, 0 updated, 0 deleted, 3 unchanged')])
  expect((await runFlagdInProcess(['export', '--format', 'yaml'], { cwd })).code).toBe(2)
})

test('import errors: invalid document (1), bad option (2)', async () => {
  const invalid = await runFlagdInProcess(['import', join(FIXTURES, 'invalid-enum-value.json')], { cwd })
  expect(invalid.code).toBe(1)
  expect(invalid.stderr).toContain('flags.ui/theme.value')
  expect((await runFlagdInProcess(['import', join(FIXTURES, 'valid-merge.json'), '--mode', 'sideways'], { cwd })).code).toBe(2)
})

test('the daemon imports a file dropped into <dataDir>/import', async () => {
  const dir = tempDir()
  const d = await startDaemon(dir, [], {
    FLAGD_IMPORT_SETTLE_MS: '200',
    FLAGD_ADMIN_USERNAME: 'admin',
    FLAGD_ADMIN_PASSWORD: 'admin-password',
  })
  await Bun.write(join(dir, 'data', 'import', '.tmp-drop'), readFileSync(join(FIXTURES, 'valid-merge.json')))
  const { renameSync, readdirSync } = await import('node:fs')
  renameSync(join(dir, 'data', 'import', '.tmp-drop'), join(dir, 'data', 'import', 'drop.json'))
  const deadline = Date.now() + 10_000
  while (readdirSync(join(dir, 'data', 'import', 'processed')).length < 2 && Date.now() < deadline) await Bun.sleep(50)
  expect(readdirSync(join(dir, 'data', 'import', 'processed'))).toHaveLength(2)
  // the log is buffered (flushed every 200 ms and at exit): read it once the daemon has stopped
  d.proc.kill('SIGTERM')
  expect(await d.proc.exited).toBe(0)
  await Bun.sleep(50) // the pipe may lag the exit
  expect(d.output()).toContain('imported drop.json: 3 created')
  const importLine = d
    .output()
    .split('\n')
    .find((l) => l.includes('"msg":"import"'))
  expect(JSON.parse(importLine ?? '{}')).toMatchObject({ source: 'drop-folder', origin: 'drop.json', outcome: 'applied' })
  rmSync(dir, { recursive: true, force: true })
})
