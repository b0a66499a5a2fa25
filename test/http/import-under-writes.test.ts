/**
 * An import writes exactly one backup, taken from the very state it applies to, however many other
 * writes land meanwhile (a review found one import beside 8 writers writing 18 backups).
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

test('an import of 2,000 flags beside 8 writers on another flag: one backup, every write acknowledged and present', async () => {
  expect((await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'busy/counter', type: 'INTEGER' } })).status).toBe(201)
  const flags: Record<string, unknown> = {}
  for (let i = 0; i < 2000; i++) flags[`bulk/f${i}`] = { type: 'INTEGER', defaultValue: 0, value: i }
  const document = { environment: 'test', version: '1.0.0', createdAt: new Date().toISOString(), flags }

  let stop = false
  let acknowledged = 0
  const writer = async (w: number) => {
    for (let n = 0; !stop; n++) {
      const res = await t.req('PUT', '/api/flags/busy/counter', { token: t.adminToken, body: { value: w * 1_000_000 + n } })
      expect(res.status).toBe(200)
      acknowledged++
    }
  }
  const writers = Array.from({ length: 8 }, (_, w) => writer(w))
  await Bun.sleep(20) // let the writers get going
  const imported = await t.req('PUT', '/api/migrations', { token: t.adminToken, body: document })
  await Bun.sleep(20)
  stop = true
  await Promise.all(writers)

  expect(imported.status).toBe(200)
  expect(imported.body.summary).toEqual({ created: 2000, updated: 0, deleted: 0, unchanged: 0 })
  const backups = readdirSync(join(t.dataDir, 'backups'))
  expect(backups).toEqual([imported.body.backup])
  // the backup is the state the import applied to: the busy flag at some acknowledged value, no bulk flag
  const saved = JSON.parse(readFileSync(join(t.dataDir, 'backups', backups[0] as string), 'utf8'))
  expect(Object.keys(saved.flags)).toEqual(['busy/counter'])
  const counter = await t.req('GET', '/api/flags/busy/counter', { token: t.adminToken })
  expect(acknowledged).toBeGreaterThan(8)
  expect(counter.body.revision).toBe(1 + acknowledged) // every acknowledged write is there
  expect((await t.req('GET', '/api/flags?prefix=bulk/', { token: t.adminToken })).body).toHaveLength(2000)
})
