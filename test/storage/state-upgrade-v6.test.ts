/**
 * The upgrade of a state file to schema version 6 (docs/environments.md#how-flags-are-stored): every
 * environment's state of a flag stored alike. The fixture is a real version-5 file, written by the
 * flagd before it (production the home environment, protected; staging and dev with states of their
 * own; a flag changed in staging alone, so its served revisions differ).
 */

import { afterEach, expect, test } from 'bun:test'
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createEnvironmentService } from '../../src/services/environment-service.ts'
import { openJsonFileStore, stateFilePath, upgradeBackupPath } from '../../src/storage/json-file-store.ts'
import { CorruptStateError } from '../../src/storage/state-file-format.ts'
import type { Store } from '../../src/storage/store.ts'
import { systemClock } from '../../src/system-clock.ts'
import { fixturePath } from '../helpers/fixtures.ts'
import { createTestApp, SYSTEM, type TestApp, tempDir } from '../helpers/test-app.ts'

const dirs: string[] = []
const stores: Store[] = []
const apps: TestApp[] = []
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close()
  for (const a of apps.splice(0)) await a.close()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** A data directory holding the version-5 fixture: its state file and its audit journal. */
function v5Directory(): { dir: string; original: string } {
  const dir = tempDir()
  dirs.push(dir)
  cpSync(fixturePath('state/v5-environments'), dir, { recursive: true })
  return { dir, original: readFileSync(stateFilePath(dir), 'utf8') }
}

test("a version-5 file: the home environment's own fields become its state, the original is kept as flagd.v5.json", async () => {
  const { dir, original } = v5Directory()
  const told: string[] = []
  const store = await openJsonFileStore({ now: systemClock, dataDir: dir, environment: 'production', log: (l) => told.push(l) })
  stores.push(store)
  expect(told).toEqual([expect.stringContaining('from schema version 5 to 6; the original is kept as')])
  expect(readFileSync(upgradeBackupPath(dir, 5), 'utf8')).toBe(original)
  const before = JSON.parse(original)
  const after = JSON.parse(readFileSync(stateFilePath(dir), 'utf8'))
  expect(after.schemaVersion).toBe(6)
  expect(after.revision).toBe(before.revision)
  for (const env of Object.values(after.environments)) expect(env).not.toHaveProperty('home')
  for (const [id, row] of Object.entries(after.flags) as [string, Record<string, unknown>][]) {
    const old = before.flags[id]
    for (const field of ['valueExists', 'value', 'enabled', 'targeting', 'rollout']) expect(row).not.toHaveProperty(field)
    expect(Object.keys(row.states as object).sort()).toEqual(['dev', 'production', 'staging'])
    expect((row.states as Record<string, unknown>).staging).toEqual(old.states.staging)
    expect(row.servedRevisions).toEqual(old.servedRevisions)
    expect(row.revision).toBe(old.revision)
  }
  const limit = store.committed().flags.get('web/limit')
  expect(limit?.states.production).toEqual({
    valueExists: true,
    value: 3,
    enabled: true,
    targeting: { if: [{ $ref: 'beta' }, 'high', 'low'] },
  })
  expect(store.committed().flags.get('web/banner')?.states).toMatchObject({
    production: { valueExists: false, enabled: true },
    staging: { value: 'hello' },
  })
  // opened again: nothing left to upgrade
  await store.close()
  stores.splice(0)
  told.length = 0
  stores.push(await openJsonFileStore({ now: systemClock, dataDir: dir, environment: 'production', log: (l) => told.push(l) }))
  expect(told).toEqual([])
})

test('an upgraded directory serves each environment as before: values, revisions, protection', async () => {
  const { dir } = v5Directory()
  const t = await createTestApp({ FLAGD_ENVIRONMENT: 'production' }, { dataDir: dir })
  apps.push(t)
  const get = async (path: string) => (await t.req('GET', path, { token: t.adminToken })).body
  expect(await get('/api/flags/web/limit')).toMatchObject({ value: 3, revision: 4 })
  expect(await get('/api/flags/web/limit?environment=staging')).toMatchObject({ value: 7, revision: 4 })
  expect(await get('/api/flags/web/limit?environment=dev')).toMatchObject({ value: 1, enabled: false })
  expect(await get('/api/flags/web/banner?environment=staging')).toMatchObject({ value: 'hello' })
  expect((await get('/api/flags/web/banner')).valueExists).toBe(false)
  // what each environment serves keeps the revision it last changed at (docs/environments.md#revisions)
  expect(t.app.services.flags.get(SYSTEM.principal, 'web/limit').servedRevision).toBe(2)
  expect(t.app.services.flags.get(SYSTEM.principal, 'web/limit', 'staging').servedRevision).toBe(3)
  // production is still protected: a direct change of its state without flag:bypass is refused
  const writer = await t.userWith(['flag:read', 'flag:write'])
  const put = await t.req('PUT', '/api/flags/web/limit', { token: writer.token, body: { value: 4 } })
  expect(put.body.error).toMatchObject({ code: 'CHANGE_REQUEST_REQUIRED' })
})

test('audit entries written before the upgrade (views, not rows) still roll back, each in its environment', async () => {
  const { dir } = v5Directory()
  const t = await createTestApp({ FLAGD_ENVIRONMENT: 'production' }, { dataDir: dir })
  apps.push(t)
  const s = t.app.services
  await s.environments.put(SYSTEM, 'production', { protected: false })
  // revision 3 was staging's value 7 (an entry naming staging); staging moves on, then back
  await s.flags.update(SYSTEM, 'web/limit', { value: 8 }, undefined, undefined, 'staging')
  const back = await s.audit.rollback(SYSTEM, 'web/limit', 3)
  expect(back).toMatchObject({ value: 7 })
  expect(s.flags.get(SYSTEM.principal, 'web/limit')).toMatchObject({ value: 3 })
  // revision 1 (the create, production's view): production's value 1 again, staging's kept
  await s.audit.rollback(SYSTEM, 'web/limit', 1)
  expect(s.flags.get(SYSTEM.principal, 'web/limit')).toMatchObject({ value: 1 })
  expect(s.flags.get(SYSTEM.principal, 'web/limit', 'staging')).toMatchObject({ value: 7 })
})

test("a file from before environments gives every flag's state to the configured default environment", async () => {
  const dir = tempDir()
  dirs.push(dir)
  const at = '2026-11-20T00:00:00.000Z'
  const flag = {
    id: 'flg_a',
    name: 'a',
    type: 'INTEGER',
    description: '',
    defaultValue: 0,
    valueExists: true,
    value: 5,
    createdAt: at,
    updatedAt: at,
    revision: 2,
  }
  const v3 = {
    schemaVersion: 3,
    revision: 2,
    revisions: { flags: 2, users: 0, sessions: 0, tokens: 0, segments: 0 },
    flags: { flg_a: flag },
    users: {},
    sessions: {},
    tokens: {},
    segments: {},
  }
  writeFileSync(stateFilePath(dir), JSON.stringify(v3))
  const store = await openJsonFileStore({ now: systemClock, dataDir: dir, environment: 'prod' })
  stores.push(store)
  expect(store.committed().flags.get('a')?.states).toEqual({ prod: { valueExists: true, value: 5 } })
  expect(readFileSync(join(dir, 'flagd.v3.json'), 'utf8')).toBe(JSON.stringify(v3))
})

/** The fixture's data directory with its state file changed by `edit` first. */
function editedV5Directory(edit: (file: Record<string, any>) => void): { dir: string; text: string } {
  const { dir, original } = v5Directory()
  const file = JSON.parse(original)
  edit(file)
  const text = JSON.stringify(file)
  writeFileSync(stateFilePath(dir), text)
  return { dir, text }
}

/** Opening `dir` is refused with a `CorruptStateError` matching `problem`, and its file is left as it was. */
async function refused(dir: string, text: string, problem: string | RegExp) {
  const opening = openJsonFileStore({ now: systemClock, dataDir: dir, environment: 'production' })
  await expect(opening).rejects.toBeInstanceOf(CorruptStateError)
  await expect(opening).rejects.toThrow(problem)
  expect(readFileSync(stateFilePath(dir), 'utf8')).toBe(text)
  expect(existsSync(upgradeBackupPath(dir, 5))).toBe(false)
}

const LIMIT = 'flg_KoadPh2dnGpCpBT44EMaBA'

test('a version-5 file with two environments marked home is refused, naming the second', async () => {
  const { dir, text } = editedV5Directory((f) => {
    f.environments.staging.home = true
  })
  await refused(dir, text, 'record environments["staging"] is marked home, as is environments["production"]')
})

test('a version-5 flag row without a boolean valueExists of its own is refused, not taken as upgraded', async () => {
  for (const valueExists of [undefined, 'yes']) {
    const { dir, text } = editedV5Directory((f) => {
      f.flags[LIMIT].valueExists = valueExists
    })
    await refused(dir, text, `record flags["${LIMIT}"] has a missing or invalid "valueExists"`)
  }
})

test('a version-5 flag row whose states is not an object is refused', async () => {
  for (const states of [[], 'staging', null]) {
    const { dir, text } = editedV5Directory((f) => {
      f.flags[LIMIT].states = states
    })
    await refused(dir, text, `record flags["${LIMIT}"] has a missing or invalid "states"`)
  }
})

test('an environment row whose name is not its id is refused', async () => {
  const { dir, text } = editedV5Directory((f) => {
    f.environments.dev.name = 'development'
  })
  await refused(dir, text, 'record environments["dev"] has name "development", not its id')
})

test('with no environment marked home, the state goes to the configured default and stays there after start', async () => {
  const { dir } = editedV5Directory((f) => {
    delete f.environments.production
    f.environments.staging.createdAt = '2026-12-07T08:00:00.000Z'
  })
  const store = await openJsonFileStore({ now: systemClock, dataDir: dir, environment: 'prod' })
  stores.push(store)
  await createEnvironmentService(store, 'prod', systemClock).ensureDefault(SYSTEM)
  const limit = store.committed().flags.get('web/limit')
  expect(limit?.states.prod).toMatchObject({ value: 3, enabled: true })
  expect(limit?.states.staging).toMatchObject({ value: 7 })
  expect(store.committed().environments.get('prod')).toMatchObject({ name: 'prod', default: true })
})
