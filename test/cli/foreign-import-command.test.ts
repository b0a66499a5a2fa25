/** `flagd import --format` (docs/migrations.md#from-other-tools): another tool's YAML or TOML file, what was skipped on stderr, bad names refused. */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runFlagdInProcess } from '../helpers/cli-in-process.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(30_000)
const cwd = tempDir()
beforeAll(() => runFlagdInProcess(['user', 'add', 'first', '--password-stdin'], { cwd, stdin: 'first-password' }))
afterAll(() => rmSync(cwd, { recursive: true, force: true }))
const FLIPT = join(import.meta.dir, '../fixtures/foreign/flipt')

test("import --format flipt reads Flipt's YAML, says what it skipped and why, and a TOML file by its ending", async () => {
  const dry = await runFlagdInProcess(['import', join(FLIPT, 'export.yml'), '--format', 'flipt', '--dry-run'], { cwd })
  expect(dry.code).toBe(0)
  expect(dry.stdout).toContain('dry run: would apply: 6 created')
  expect(dry.stderr).toContain('skipped: release-date: rollout 1: segment after-launch')
  expect(dry.stderr).toContain('warning: percentages:')
  const toml = await runFlagdInProcess(['import', join(FLIPT, 'small.toml'), '--format', 'flipt', '--json'], { cwd })
  expect(JSON.parse(toml.stdout)).toMatchObject({ source: { format: 'flipt' }, skipped: [], summary: { created: 1 } })
})

test('a format flagd does not know, or --source-environment alone, is a usage error (2); an unreadable YAML file fails (1) saying so', async () => {
  expect((await runFlagdInProcess(['import', join(FLIPT, 'export.yml'), '--format', 'flipd'], { cwd })).code).toBe(2)
  expect((await runFlagdInProcess(['import', join(FLIPT, 'export.yml'), '--source-environment', 'x'], { cwd })).code).toBe(2)
  const broken = join(cwd, 'broken.yaml')
  writeFileSync(broken, 'flags: [\n')
  const bad = await runFlagdInProcess(['import', broken, '--format', 'flipt'], { cwd })
  expect(bad.code).toBe(1)
  expect(bad.stderr).toContain('not valid YAML')
})

test('a YAML or TOML file without --format fails (1) naming the formats that read it, and another JSON file the one to add', async () => {
  const yaml = await runFlagdInProcess(['import', join(FLIPT, 'export.yml'), '--dry-run'], { cwd })
  expect(yaml.code).toBe(1)
  expect(yaml.stderr).toContain('--format flipt or --format gofeatureflag')
  const unleash = join(import.meta.dir, '../fixtures/foreign/unleash/export.json')
  const json = await runFlagdInProcess(['import', unleash, '--dry-run'], { cwd })
  expect(json.code).toBe(1)
  expect(json.stderr).toContain('--format unleash')
})
