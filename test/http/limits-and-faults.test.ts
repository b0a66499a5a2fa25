/**
 * limits.maxFlags and capped error lists (docs/migrations.md), the cached export (docs/migrations.md), and imports on a failing
 * disk (docs/api.md#conventions): refused with 503, nothing written, no backup either.
 */

import { afterEach, expect, test } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { exportText } from '../../src/domain/export-document.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

const apps: TestApp[] = []
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close()
})
async function app(...args: Parameters<typeof createTestApp>) {
  const t = await createTestApp(...args)
  apps.push(t)
  return t
}
const doc = (flags: Record<string, unknown>) => ({ environment: 'e', version: '1.0.0', createdAt: new Date().toISOString(), flags })

test('limits.maxFlags: a create or import past it is 400 naming the limit, and nothing changes', async () => {
  const t = await app({ FLAGD_LIMITS_MAX_FLAGS: '3' })
  for (const name of ['a', 'b', 'c'])
    expect((await t.req('POST', '/api/flags', { token: t.adminToken, body: { name, type: 'BOOLEAN' } })).status).toBe(201)
  const fourth = await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'd', type: 'BOOLEAN' } })
  expect(fourth.status).toBe(400)
  expect(fourth.body.error.message).toContain('limits.maxFlags')
  const grow = await t.req('PUT', '/api/migrations', { token: t.adminToken, body: doc({ d: { type: 'BOOLEAN' } }) })
  expect(grow.status).toBe(400)
  expect(grow.body.error.details.errors[0].reason).toContain('limits.maxFlags')
  // a replace that stays within the limit is fine
  const swap = await t.req('PUT', '/api/migrations?mode=replace', {
    token: t.adminToken,
    body: doc({ x: { type: 'BOOLEAN' }, y: { type: 'BOOLEAN' } }),
  })
  expect(swap.status).toBe(200)
  expect((await t.req('GET', '/api/flags', { token: t.adminToken })).body.map((f: { name: string }) => f.name)).toEqual(['x', 'y'])
})

test('an import with 1,500 problems lists the first 1,000 and counts them all', async () => {
  const t = await app()
  const flags: Record<string, unknown> = {}
  for (let i = 0; i < 1500; i++) flags[`bad/f${i}`] = { type: 'INTEGER', value: 'not a number' }
  const res = await t.req('PUT', '/api/migrations', { token: t.adminToken, body: doc(flags) })
  expect(res.status).toBe(400)
  expect(res.body.error.details.errors).toHaveLength(1000)
  expect(res.body.error.details.errorCount).toBe(1500)
  expect(res.text.length).toBeLessThan(200_000)
})

test('the export is the same text as before caching, and follows every change', async () => {
  const t = await app()
  await t.req('POST', '/api/flags', {
    token: t.adminToken,
    body: { name: 'x/tag', type: 'TAG', enumValues: ['a', 'ü😀'], value: ['ü😀'], description: 'q"\\' },
  })
  for (const path of ['/api/migrations/export', '/migration/export']) {
    const first = await t.req('GET', path, { token: t.adminToken })
    expect(first.text).toBe(exportText(first.body))
  }
  await t.req('PUT', '/api/flags/x/tag', { token: t.adminToken, body: { value: ['a'] } })
  const after = await t.req('GET', '/migration/export')
  expect(after.body.flags['x/tag'].value).toEqual(['a'])
  expect(after.text).toBe(exportText(after.body))
  const empty = await app()
  const none = await empty.req('GET', '/migration/export')
  expect(none.text).toBe(exportText(none.body))
})

test('a full disk while writing the backup: 503, degraded, nothing applied; later imports write nothing', async () => {
  let failBackups = false
  const writes: string[] = []
  const faults = (path: string) => {
    writes.push(path)
    if (failBackups && path.includes('/backups/')) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
  }
  const t = await app({}, { faults })
  await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'keep', type: 'BOOLEAN' } })
  expect((await t.req('GET', '/health')).body.status).toBe('ok') // asked before: the same state must not keep this answer
  failBackups = true
  const res = await t.req('PUT', '/api/migrations', {
    token: t.adminToken,
    body: doc({ keep: { type: 'BOOLEAN', value: true }, added: { type: 'BOOLEAN' } }),
  })
  expect(res.status).toBe(503)
  expect(res.body.error.code).toBe('UNAVAILABLE')
  expect((await t.req('GET', '/health')).body.status).toBe('degraded')
  expect(
    (await t.req('GET', '/api/flags', { token: t.adminToken })).body.map((f: { name: string; valueExists: boolean }) => [
      f.name,
      f.valueExists,
    ]),
  ).toEqual([['keep', false]])
  expect(!existsSync(join(t.dataDir, 'backups')) || readdirSync(join(t.dataDir, 'backups')).length === 0).toBe(true)
  // on a degraded store an import writes nothing at all, not even its backup
  failBackups = false
  writes.length = 0
  const again = await t.req('PUT', '/api/migrations', { token: t.adminToken, body: doc({ other: { type: 'BOOLEAN' } }) })
  expect(again.status).toBe(503)
  expect(writes).toEqual([])
})
