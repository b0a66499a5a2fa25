/** `flagd import --format gofeatureflag` prints each later step it makes a scheduled change request (docs/migrations.md#changes-a-later-time-brings). */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runFlagdInProcess } from '../helpers/cli-in-process.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(30_000)
const cwd = tempDir()
beforeAll(() => runFlagdInProcess(['user', 'add', 'first', '--password-stdin'], { cwd, stdin: 'first-password' }))
afterAll(() => rmSync(cwd, { recursive: true, force: true }))

test('a dry run says what it would schedule; the import names the change request it made', async () => {
  const file = join(cwd, 'flags.goff.yaml')
  writeFileSync(
    file,
    'price:\n  variations: { low: 1, high: 2 }\n  defaultRule: { variation: low }\n  scheduledRollout:\n    - date: 2099-01-01T00:00:00Z\n      defaultRule: { variation: high }\n',
  )
  const dry = await runFlagdInProcess(['import', file, '--format', 'gofeatureflag', '--dry-run'], { cwd })
  expect(dry.code).toBe(0)
  expect(dry.stdout).toContain('scheduled: price at 2099-01-01T00:00:00.000Z: a change request would be made (scheduled)')
  const done = await runFlagdInProcess(['import', file, '--format', 'gofeatureflag'], { cwd })
  expect(done.code).toBe(0)
  expect(done.stdout).toMatch(/scheduled: price at 2099-01-01T00:00:00\.000Z: change request cr_\S+ \(scheduled\)/)
})
