/** The store: durability, group commit, refusal of damaged files, read-only after a failed write. */

import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { writeFileAtomic } from '../../src/storage/atomic-write.ts'
import { openJsonFileStore, stateFilePath, type Store } from '../../src/storage/json-file-store.ts'
import { CorruptStateError } from '../../src/storage/state.ts'
import { sampleFlag } from '../helpers/sample-flag.ts'
import { createTestApp, tempDir } from '../helpers/test-app.ts'

const dirs: string[] = []
const stores: Store[] = []
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
async function open(writer?: (p: string, c: string) => Promise<void>, dir = tempDir()) {
  dirs.push(dir)
  const store = await openJsonFileStore({ dataDir: dir, ...(writer ? { writer } : {}) })
  stores.push(store)
  return { store, dir }
}

describe('open', () => {
  test('creates an empty state file with a schema version, mode 0600', async () => {
    const { dir } = await open()
    const path = stateFilePath(dir)
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ schemaVersion: 1, users: {}, sessions: {}, flags: {} })
    expect(statSync(path).mode & 0o777).toBe(0o600)
  })

  test.each([
    ['not JSON', '{"schemaVersion": 1, "users": {'],
    ['not an object', '[]'],
    ['no schema version', '{"users":{},"sessions":{},"flags":{}}'],
    ['a newer schema version', '{"schemaVersion":99,"users":{},"sessions":{},"flags":{}}'],
    ['a missing map', '{"schemaVersion":1,"users":{},"flags":{}}'],
  ])('refuses a state file that is %s, and leaves it untouched', async (_name, text) => {
    const dir = tempDir()
    dirs.push(dir)
    writeFileSync(stateFilePath(dir), text)
    await expect(openJsonFileStore({ dataDir: dir })).rejects.toBeInstanceOf(CorruptStateError)
    expect(readFileSync(stateFilePath(dir), 'utf8')).toBe(text)
    // the lock was released: a later open with a repaired file works
    writeFileSync(stateFilePath(dir), '{"schemaVersion":1,"users":{},"sessions":{},"flags":{}}')
    stores.push(await openJsonFileStore({ dataDir: dir }))
  })

  test('removes temp files a crashed writer left behind', async () => {
    const dir = tempDir()
    dirs.push(dir)
    writeFileSync(join(dir, 'flagd.json.tmp-123-abcdef'), 'partial')
    await open(undefined, dir)
    expect(readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([])
  })
})

describe('writes', () => {
  test('a change is on disk when mutate resolves', async () => {
    const { store, dir } = await open()
    await store.mutate((s) => {
      s.flags.a = sampleFlag('a')
    })
    expect(JSON.parse(readFileSync(stateFilePath(dir), 'utf8')).flags).toEqual({ a: sampleFlag('a') })
  })

  test('concurrent changes are group-committed', async () => {
    let writes = 0
    const { store } = await open(async (p, c) => {
      writes++
      await Bun.sleep(5)
      await writeFileAtomic(p, c)
    })
    writes = 0
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        store.mutate((s) => {
          s.flags[`f${i}`] = sampleFlag(`f${i}`)
        }),
      ),
    )
    expect(writes).toBeLessThanOrEqual(3)
    expect(Object.keys(store.state.flags)).toHaveLength(50)
  })

  test('a failed write rejects, reverts memory to the last durable state and makes the store read-only', async () => {
    let fail = false
    const { store, dir } = await open(async (p, c) => {
      if (fail) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
      await writeFileAtomic(p, c)
    })
    await store.mutate((s) => {
      s.flags.kept = sampleFlag('kept')
    })
    fail = true
    await expect(store.mutate((s) => void (s.flags.lost = sampleFlag('lost')))).rejects.toMatchObject({ code: 'UNAVAILABLE' })
    expect(store.writable).toBe(false)
    expect(store.state.flags).toEqual({ kept: sampleFlag('kept') })
    fail = false
    await expect(store.mutate((s) => void (s.flags.later = sampleFlag('later')))).rejects.toMatchObject({ code: 'UNAVAILABLE' })
    expect(JSON.parse(readFileSync(stateFilePath(dir), 'utf8')).flags).toEqual({ kept: sampleFlag('kept') })
  })
})

test('a full disk answers 503 and degrades health; reads go on; restart recovers', async () => {
  let fail = false
  const writer = async (p: string, c: string) => {
    if (fail) throw Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' })
    await writeFileAtomic(p, c)
  }
  const t = await createTestApp({}, { writer })
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
  const dataDir = t.dataDir
  await t.app.close()
  const again = await createTestApp({}, { dataDir })
  expect((await again.req('GET', '/health')).status).toBe(200)
  expect(existsSync(stateFilePath(dataDir))).toBe(true)
  await again.close()
  rmSync(dataDir, { recursive: true, force: true })
})
