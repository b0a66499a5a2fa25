/** docs/migrations.md: backups are never overwritten; a second one under the same name gets -2, -3, ... */

import { expect, test } from 'bun:test'
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { writeBackup } from '../../src/storage/backup-store.ts'
import { tempDir } from '../helpers/test-app.ts'

test('the same name three times gives name, name-2, name-3, each kept, mode 0600', async () => {
  const dir = tempDir()
  const names = []
  for (let i = 0; i < 3; i++) names.push(await writeBackup(dir, 'flagd_migration_prod_20261122-101500.json', `{"n":${i}}`))
  expect(names).toEqual([
    'flagd_migration_prod_20261122-101500.json',
    'flagd_migration_prod_20261122-101500-2.json',
    'flagd_migration_prod_20261122-101500-3.json',
  ])
  expect(readdirSync(join(dir, 'backups')).sort()).toEqual([...names].sort())
  expect(readFileSync(join(dir, 'backups', names[2] as string), 'utf8')).toBe('{"n":2}')
  expect(statSync(join(dir, 'backups', names[0] as string)).mode & 0o777).toBe(0o600)
  rmSync(dir, { recursive: true, force: true })
})
