/**
 * The JSON file store beyond the shared contract: the file's format and mode, refusal of damaged
 * files (naming the bad record), the upgrade of a version-1 file, group commit, and read-only after a
 * failed write. The contract itself runs in `json-file-store.contract.test.ts`.
 */

import { afterEach, describe, expect, test } from 'bun:test'
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { systemPrincipal } from '../../src/domain/principal.ts'
import { openJsonFileStore, stateFilePath, v1BackupPath } from '../../src/storage/json-file-store.ts'
import { repairShadowedSegments } from '../../src/storage/shadowed-segments.ts'
import { CorruptStateError } from '../../src/storage/state-file-format.ts'
import type { Store } from '../../src/storage/store.ts'
import { systemClock } from '../../src/system-clock.ts'
import { fixturePath } from '../helpers/fixtures.ts'
import { sampleFlag } from '../helpers/sample-flag.ts'
import { readStateFile } from '../helpers/state-file.ts'
import { createTestApp, tempDir } from '../helpers/test-app.ts'

const meta = { principal: systemPrincipal('cli'), source: 'cli' as const, requestId: 'test' }
const dirs: string[] = []
const stores: Store[] = []
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
async function open(faults?: (path: string) => void | Promise<void>, dir = tempDir()) {
  dirs.push(dir)
  const store = await openJsonFileStore({ now: systemClock, dataDir: dir, ...(faults ? { faults } : {}) })
  stores.push(store)
  return { store, dir }
}
/** Whether this machine lets the tests make a directory immutable (root on ext4 and the like). */
function canMakeImmutable(): boolean {
  const probe = tempDir()
  try {
    if (Bun.spawnSync(['chattr', '+i', probe], { stderr: 'ignore' }).exitCode !== 0) return false
    Bun.spawnSync(['chattr', '-i', probe])
    return true
  } catch {
    return false // no chattr
  } finally {
    rmSync(probe, { recursive: true, force: true })
  }
}
/** `sampleFlag(name)` as files before version 6 stored it: the state in the row's own fields. */
function oldRow(name: string): Record<string, unknown> {
  const { states, ...shared } = sampleFlag(name)
  return { ...shared, ...states.development }
}

const EMPTY_STATE = {
  schemaVersion: 6,
  revision: 0,
  revisions: { flags: 0, users: 0, sessions: 0, tokens: 0, segments: 0, environments: 0, changeRequests: 0 },
  flags: {},
  users: {},
  sessions: {},
  tokens: {},
  segments: {},
  environments: {},
  changeRequests: {},
}

describe('open', () => {
  test('creates an empty version-6 state file, mode 0600', async () => {
    const { dir } = await open()
    const path = stateFilePath(dir)
    // with the store's identity, which its change journal's lines carry
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ ...EMPTY_STATE, storeId: expect.stringMatching(/^sto_[A-Za-z0-9_-]{22}$/) })
    expect(statSync(path).mode & 0o777).toBe(0o600)
  })

  const flag = (extra: Record<string, unknown>) =>
    JSON.stringify({ ...EMPTY_STATE, flags: { flg_a: { ...sampleFlag('a'), id: 'flg_a', ...extra } } })
  test.each([
    ['not JSON', '{"schemaVersion": 2, "users": {', 'not valid JSON'],
    ['not an object', '[]', 'not a JSON object'],
    ['without a schema version', '{"users":{},"sessions":{},"flags":{}}', 'no valid schemaVersion'],
    ['from a newer flagd', '{"schemaVersion":99,"users":{},"sessions":{},"flags":{}}', 'written by a newer flagd'],
    ['missing a table', JSON.stringify({ ...EMPTY_STATE, tokens: undefined }), '"tokens" is missing'],
    ['holding a null session', JSON.stringify({ ...EMPTY_STATE, sessions: { x: null } }), 'record sessions["x"] is not an object'],
    ['holding a null flag', JSON.stringify({ ...EMPTY_STATE, flags: { x: null } }), 'record flags["x"] is not an object'],
    ['holding a flag without a type', flag({ type: undefined }), 'record flags["flg_a"] has a missing or invalid "type"'],
    ['holding a flag with a bad name', flag({ name: 'a//b' }), '"name"'],
    ['holding a record under another id', flag({ id: 'flg_b' }), 'not its key'],
    [
      'with two flags of one name',
      JSON.stringify({ ...EMPTY_STATE, flags: { flg_a: sampleFlag('a'), flg_b: { ...sampleFlag('a'), id: 'flg_b' } } }),
      'share a name',
    ],
    [
      'a version 1 file with a null flag',
      '{"schemaVersion":1,"users":{},"sessions":{},"flags":{"x":null}}',
      'record flags["x"] is not an object',
    ],
  ])('refuses a state file %s, naming the problem, and leaves it untouched', async (_name, text, problem) => {
    const dir = tempDir()
    dirs.push(dir)
    writeFileSync(stateFilePath(dir), text)
    const err = await openJsonFileStore({ now: systemClock, dataDir: dir }).catch((e) => e)
    expect(err).toBeInstanceOf(CorruptStateError)
    expect(err.message).toContain(problem)
    expect(readFileSync(stateFilePath(dir), 'utf8')).toBe(text)
    // the lock was released: a later open with a repaired file works
    writeFileSync(stateFilePath(dir), JSON.stringify(EMPTY_STATE))
    stores.push(await openJsonFileStore({ now: systemClock, dataDir: dir }))
  })

  test('removes temp files a crashed writer left behind', async () => {
    const dir = tempDir()
    dirs.push(dir)
    writeFileSync(join(dir, 'flagd.json.tmp-123-abcdef'), 'partial')
    await open(undefined, dir)
    expect(readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([])
  })
})

describe('segments stored twice under one name by an earlier flagd', () => {
  test('the newest serves, the older row is deleted at open, and a delete by name stays deleted', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const row = (id: string, revision: number, description: string) => ({
      id,
      name: 'ys1',
      description,
      rule: { '==': [1, 1] },
      createdAt: '2026-11-20T00:00:00.000Z',
      updatedAt: `2026-11-2${revision}T00:00:00.000Z`,
      revision,
    })
    const state = {
      ...EMPTY_STATE,
      revision: 2,
      revisions: { ...EMPTY_STATE.revisions, segments: 2 },
      segments: { seg_new: row('seg_new', 2, 'newer'), seg_old: row('seg_old', 1, 'older') },
    }
    writeFileSync(stateFilePath(dir), JSON.stringify(state))
    const told: string[] = []
    let store = await openJsonFileStore({ now: systemClock, dataDir: dir })
    expect(store.committed().segments.get('ys1')?.description).toBe('newer')
    expect(
      store
        .committed()
        .shadowedSegments()
        .map((s) => s.id),
    ).toEqual(['seg_old'])
    expect(await repairShadowedSegments(store, (line) => told.push(line))).toBe(1)
    expect(told).toEqual([expect.stringContaining('removed 1 older duplicate row(s) of segment(s) ys1')])
    expect(store.committed().shadowedSegments()).toEqual([])
    expect(await store.audit.query({ limit: 1 })).toEqual([]) // maintenance: no row anybody could see changed
    await store.transact(meta, (tx) => tx.delete('segments', 'seg_new'))
    await store.close()
    store = await openJsonFileStore({ now: systemClock, dataDir: dir })
    stores.push(store)
    expect(store.committed().segments.size).toBe(0) // the older row does not come back
    expect(await repairShadowedSegments(store, (line) => told.push(line))).toBe(0)
  })
})

describe('upgrade from version 1 (a file written by the first release)', () => {
  test('a version-2 file (before segments) gains an empty segments table; the original is kept as flagd.v2.json', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const {
      segments: _s,
      environments: _e,
      changeRequests: _c,
      ...v2
    } = {
      ...EMPTY_STATE,
      schemaVersion: 2,
      revisions: { flags: 1, users: 0, sessions: 0, tokens: 0 },
      revision: 1,
    }
    const text = JSON.stringify({ ...v2, flags: { flg_a: { ...oldRow('a'), id: 'flg_a' } } })
    writeFileSync(stateFilePath(dir), text)
    const told: string[] = []
    const store = await openJsonFileStore({ now: systemClock, dataDir: dir, log: (line) => told.push(line) })
    stores.push(store)
    expect(told).toEqual([expect.stringContaining('from schema version 2 to 6; the original is kept as')])
    expect(readFileSync(join(dir, 'flagd.v2.json'), 'utf8')).toBe(text)
    const upgraded = JSON.parse(readFileSync(stateFilePath(dir), 'utf8'))
    expect(upgraded).toMatchObject({
      schemaVersion: 6,
      segments: {},
      environments: {},
      changeRequests: {},
      revisions: { flags: 1, segments: 0, environments: 0, changeRequests: 0 },
    })
    expect(store.committed().flags.get('a')?.id).toBe('flg_a')
  })

  test('a version-3 file (before environments) gains an empty environments table; the original is kept as flagd.v3.json', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const {
      environments: _e,
      changeRequests: _c,
      ...v3
    } = {
      ...EMPTY_STATE,
      schemaVersion: 3,
      revisions: { flags: 1, users: 0, sessions: 0, tokens: 0, segments: 0 },
      revision: 1,
    }
    const text = JSON.stringify({ ...v3, flags: { flg_a: { ...oldRow('a'), id: 'flg_a' } } })
    writeFileSync(stateFilePath(dir), text)
    const told: string[] = []
    const store = await openJsonFileStore({ now: systemClock, dataDir: dir, log: (line) => told.push(line) })
    stores.push(store)
    expect(told).toEqual([expect.stringContaining('from schema version 3 to 6; the original is kept as')])
    expect(readFileSync(join(dir, 'flagd.v3.json'), 'utf8')).toBe(text)
    const upgraded = JSON.parse(readFileSync(stateFilePath(dir), 'utf8'))
    expect(upgraded).toMatchObject({ schemaVersion: 6, environments: {}, revisions: { flags: 1, environments: 0 } })
    expect(store.committed().flags.get('a')).toEqual({ ...sampleFlag('a'), id: 'flg_a' } as never)
    expect(store.committed().environments.size).toBe(0)
  })

  test('a version-4 file (before change requests) gains an empty changeRequests table; the original is kept as flagd.v4.json', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const { changeRequests: _c, ...v4 } = {
      ...EMPTY_STATE,
      schemaVersion: 4,
      revisions: { flags: 1, users: 0, sessions: 0, tokens: 0, segments: 0, environments: 0 },
      revision: 1,
    }
    const text = JSON.stringify({ ...v4, flags: { flg_a: { ...oldRow('a'), id: 'flg_a' } } })
    writeFileSync(stateFilePath(dir), text)
    const told: string[] = []
    const store = await openJsonFileStore({ now: systemClock, dataDir: dir, log: (line) => told.push(line) })
    stores.push(store)
    expect(told).toEqual([expect.stringContaining('from schema version 4 to 6; the original is kept as')])
    expect(readFileSync(join(dir, 'flagd.v4.json'), 'utf8')).toBe(text)
    const upgraded = JSON.parse(readFileSync(stateFilePath(dir), 'utf8'))
    expect(upgraded).toMatchObject({ schemaVersion: 6, changeRequests: {}, revisions: { flags: 1, changeRequests: 0 } })
    expect(store.committed().changeRequests.size).toBe(0)
  })

  test('flags get stable ids, everything is kept, the original is kept beside it', async () => {
    const dir = tempDir()
    dirs.push(dir)
    const original = readFileSync(fixturePath('state/v1-release.json'), 'utf8')
    const v1 = JSON.parse(original)
    copyFileSync(fixturePath('state/v1-release.json'), stateFilePath(dir))
    const told: string[] = []
    const store = await openJsonFileStore({ now: systemClock, dataDir: dir, log: (line) => told.push(line) })
    stores.push(store)
    expect(told).toEqual([expect.stringContaining('from schema version 1 to 6; the original is kept as')])
    expect(readFileSync(v1BackupPath(dir), 'utf8')).toBe(original)
    const upgraded = JSON.parse(readFileSync(stateFilePath(dir), 'utf8'))
    expect(upgraded.schemaVersion).toBe(6)
    expect(upgraded.segments).toEqual({})
    expect(upgraded.environments).toEqual({})
    expect(upgraded.tokens).toEqual({})
    const s = store.committed()
    expect([...s.flags.keys()].sort()).toEqual(Object.keys(v1.flags).sort())
    // a file from before environments: each flag's state becomes the default environment's
    for (const [name, flag] of Object.entries(v1.flags)) {
      const now = s.flags.get(name)
      const { valueExists, value, enabled, targeting, chancePercentB, ...shared } = flag as Record<string, unknown>
      const own = { valueExists, value, enabled, targeting, chancePercentB }
      const state = Object.fromEntries(Object.entries(own).filter(([, v]) => v !== undefined))
      expect(now).toEqual({ ...shared, states: { development: state }, id: expect.stringMatching(/^flg_[A-Za-z0-9_-]{22}$/) } as never)
    }
    expect(new Set([...s.flags.values()].map((f) => f.id)).size).toBe(s.flags.size)
    expect([...s.users.values()]).toEqual(Object.values(v1.users))
    expect([...s.sessions.values()]).toEqual(Object.values(v1.sessions))
    // ids are stable from now on: a restart does not upgrade again
    await store.close()
    stores.splice(0)
    told.length = 0
    const again = await openJsonFileStore({ now: systemClock, dataDir: dir, log: (line) => told.push(line) })
    stores.push(again)
    expect(told).toEqual([])
    expect([...again.committed().flags.values()].map((f) => f.id)).toEqual([...s.flags.values()].map((f) => f.id))
  })

  test('a v1 data directory serves its users and flags through the API', async () => {
    const dataDir = tempDir()
    dirs.push(dataDir)
    copyFileSync(fixturePath('state/v1-release.json'), stateFilePath(dataDir))
    const t = await createTestApp({}, { dataDir })
    try {
      const flag = await t.req('GET', '/api/flags/app/max_retries', { token: t.adminToken })
      expect(flag.body).toMatchObject({ name: 'app/max_retries', value: 7, revision: 2 })
      expect(flag.body.id).toBeUndefined()
      const put = await t.req('PUT', '/api/flags/app/max_retries', {
        token: t.adminToken,
        body: { value: 8 },
        headers: { 'if-match': '"2"' },
      })
      expect(put.body.revision).toBe(3)
      expect((await t.req('GET', '/api/users', { token: t.adminToken })).body.map((u: { username: string }) => u.username)).toEqual([
        'admin',
        'alice',
      ])
    } finally {
      await t.app.close()
    }
  })
})

describe('writes', () => {
  test('a change is durable when transact resolves, and the state file holds it after a clean stop', async () => {
    const { store, dir } = await open()
    await store.transact(meta, (tx) => tx.put('flags', sampleFlag('a')))
    // durable in the change journal: what opening the directory now would find
    expect(readStateFile(stateFilePath(dir)).flags.get('a')).toEqual(sampleFlag('a'))
    expect(JSON.parse(readFileSync(stateFilePath(dir), 'utf8')).flags).toEqual({})
    await store.close()
    stores.splice(stores.indexOf(store), 1)
    expect(JSON.parse(readFileSync(stateFilePath(dir), 'utf8')).flags).toEqual({ flg_a: sampleFlag('a') })
  })

  test('concurrent changes are group-committed', async () => {
    let writes = 0
    const { store } = await open(async (p) => {
      if (!p.includes('/changes/')) return
      writes++
      await Bun.sleep(5)
    })
    writes = 0
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.transact(meta, (tx) => tx.put('flags', sampleFlag(`f${i}`)))))
    expect(writes).toBeLessThanOrEqual(3)
    expect(store.committed().flags.size).toBe(50)
  })

  test('a failed write rejects, leaves readers on the last durable state and makes the store read-only', async () => {
    let fail = false
    const { store, dir } = await open(() => {
      if (fail) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
    })
    await store.transact(meta, (tx) => tx.put('flags', sampleFlag('kept')))
    fail = true
    const heard: number[] = []
    store.onCommit((c) => heard.push(c.changes.length))
    const lost = store.transact(meta, (tx) => tx.put('flags', sampleFlag('lost')))
    const alsoLost = store.transact(meta, (tx) => tx.put('flags', sampleFlag('also-lost')))
    const outcomes = await Promise.allSettled([lost, alsoLost])
    expect(outcomes.map((o) => o.status === 'rejected' && o.reason.code)).toEqual(['UNAVAILABLE', 'UNAVAILABLE'])
    expect(store.writable).toBe(false)
    expect([...store.committed().flags.keys()]).toEqual(['kept'])
    expect(heard).toEqual([])
    fail = false
    await expect(store.transact(meta, (tx) => tx.put('flags', sampleFlag('later')))).rejects.toMatchObject({ code: 'UNAVAILABLE' })
    expect([...readStateFile(stateFilePath(dir)).flags.keys()]).toEqual(['kept'])
    // the failed batch's audit entries were taken back with it
    expect((await store.audit.query({ limit: 10 })).map((e) => e.target.name)).toEqual(['kept'])
    await store.close()
    stores.splice(stores.indexOf(store), 1)
    const reopened = await openJsonFileStore({ now: systemClock, dataDir: dir })
    stores.push(reopened)
    expect((await reopened.audit.query({ limit: 10 })).map((e) => e.target.name)).toEqual(['kept'])
    expect([...reopened.committed().flags.keys()]).toEqual(['kept'])
  })

  test('a batch whose journal line cannot be written leaves no backup of its import', async () => {
    let fail = false
    const { store, dir } = await open((path) => {
      if (fail && path.includes('/changes/')) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
    })
    await store.transact(meta, (tx) => tx.put('flags', sampleFlag('kept')))
    fail = true
    const importing = store.transact(meta, (tx) => {
      tx.backup('flagd_migration_test.json', '{"flags":{}}')
      tx.put('flags', sampleFlag('imported'))
    })
    await expect(importing).rejects.toMatchObject({ code: 'UNAVAILABLE' })
    expect(existsSync(join(dir, 'backups')) ? readdirSync(join(dir, 'backups')) : []).toEqual([])
  })

  // An immutable segment (chattr +i) refuses the append even to root, while the audit journal still
  // takes the batch's lines: the failure must take them back.
  test.skipIf(!canMakeImmutable())(
    'a change journal line that cannot be written fails the batch and takes its audit entries back',
    async () => {
      const { store, dir } = await open()
      await store.transact(meta, (tx) => tx.put('flags', sampleFlag('kept')))
      const audit = () =>
        readdirSync(join(dir, 'audit'))
          .map((n) => readFileSync(join(dir, 'audit', n), 'utf8'))
          .join('')
      const before = audit()
      const segments = readdirSync(join(dir, 'changes')).map((n) => join(dir, 'changes', n))
      for (const path of segments) Bun.spawnSync(['chattr', '+i', path])
      try {
        await expect(store.transact(meta, (tx) => tx.put('flags', sampleFlag('lost')))).rejects.toMatchObject({ code: 'UNAVAILABLE' })
      } finally {
        for (const path of segments) Bun.spawnSync(['chattr', '-i', path])
      }
      expect(store.writable).toBe(false)
      expect(audit()).toBe(before)
      expect((await store.audit.query({ limit: 10 })).map((e) => e.target.name)).toEqual(['kept'])
      expect([...readStateFile(stateFilePath(dir)).flags.keys()]).toEqual(['kept'])
    },
  )
})

test('a full disk answers 503 and degrades health; reads go on; restart recovers', async () => {
  let fail = false
  const faults = () => {
    if (fail) throw Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' })
  }
  const t = await createTestApp({}, { faults })
  fail = true
  const res = await t.req('POST', '/api/users', { token: t.adminToken, body: { username: 'nospace', password: 'password1' } })
  expect(res.status).toBe(503)
  expect(res.body.error.code).toBe('UNAVAILABLE')
  const health = await t.req('GET', '/health')
  expect(health.status).toBe(503)
  expect(health.body.status).toBe('degraded')
  fail = false
  const users = await t.req('GET', '/api/users', { token: t.adminToken })
  expect(users.status).toBe(200)
  expect(users.body.map((u: { username: string }) => u.username)).toEqual(['admin'])
  const login = await t.req('POST', '/api/login', { body: { username: 'admin', password: 'admin-password' } })
  expect(login.status).toBe(503)
  const again = await t.restart()
  try {
    expect((await again.req('GET', '/health')).status).toBe(200)
    expect(existsSync(stateFilePath(again.dataDir))).toBe(true)
  } finally {
    await again.close()
  }
})
