/**
 * `flagd backup` (docs/operations.md#backups): while the daemon runs, the backup holds a change
 * acknowledged a moment before (still only in the change journal, not yet in `flagd.json`); a data
 * directory made from the backup alone serves it. Stopped, the command reads the directory itself.
 * Without --out it refuses rather than print password hashes.
 */

import { afterAll, expect, setDefaultTimeout, test } from 'bun:test'
import { copyFileSync, mkdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { openJsonFileStore, stateFilePath } from '../../src/storage/json-file-store.ts'
import { systemClock } from '../../src/system-clock.ts'
import { runFlagdInProcess } from '../helpers/cli-in-process.ts'
import { readStateFileOnly } from '../helpers/state-file.ts'
import { tempDir } from '../helpers/test-app.ts'
import { daemonForFile } from '../helpers/test-daemon.ts'

setDefaultTimeout(30_000)
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
const daemon = daemonForFile()

test('a backup taken while the daemon runs holds a change the state file does not have yet, and restores it', async () => {
  const d = daemon()
  const created = await d.api('POST', '/api/flags', { name: 'fresh', type: 'BOOLEAN', value: true })
  expect(created.status).toBe(201)
  // acknowledged, in the change journal; the state file gets it at the next checkpoint
  expect(readStateFileOnly(stateFilePath(join(d.cwd, 'data'))).flags.has('fresh')).toBe(false)

  const out = await runFlagdInProcess(['backup', '--out', 'backup.json'], { cwd: d.cwd })
  expect([out.code, out.stderr]).toEqual([0, expect.stringMatching(/^wrote a backup of revision \d+ \(1 flag\) to backup\.json\n$/)])
  expect(statSync(join(d.cwd, 'backup.json')).mode & 0o777).toBe(0o600)
  expect(readStateFileOnly(join(d.cwd, 'backup.json')).flags.get('fresh')?.states.development?.value).toBe(true)

  const restored = tempDir()
  dirs.push(restored)
  mkdirSync(restored, { recursive: true })
  copyFileSync(join(d.cwd, 'backup.json'), stateFilePath(restored))
  const store = await openJsonFileStore({ now: systemClock, dataDir: restored })
  try {
    expect([...store.committed().flags.keys()]).toEqual(['fresh'])
    expect([...store.committed().users.values()].map((u) => u.username)).toEqual(['admin'])
  } finally {
    await store.close()
  }
})

test('flagd backup on a stopped directory, and without --out', async () => {
  const cwd = tempDir()
  dirs.push(cwd)
  const add = await runFlagdInProcess(['user', 'add', 'ops', '--permissions', 'flag:read', '--password-stdin'], {
    cwd,
    stdin: 'ops-password-1',
  })
  expect(add.code).toBe(0)
  const out = await runFlagdInProcess(['backup', '--out', 'b.json'], { cwd })
  expect([out.code, out.stderr]).toEqual([0, expect.stringContaining('(0 flags) to b.json')])
  expect([...readStateFileOnly(join(cwd, 'b.json')).users.values()].map((u) => u.username)).toEqual(['ops'])
  const refused = await runFlagdInProcess(['backup'], { cwd })
  expect(refused.code).not.toBe(0)
  expect(refused.stderr).toContain('needs --out FILE')
})
