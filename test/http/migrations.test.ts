/** docs/migrations.md–6.2, docs/migrations.md: export, import modes, validation, backups, FlagFlow files. */

import { expect, test } from 'bun:test'
import { mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fixture, fixtureText } from '../helpers/fixtures.ts'
import { createTestApp, scenarioGroup, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
const group = scenarioGroup(
  async () => {
    t = await createTestApp({ FLAGD_ENVIRONMENT: 'production' })
  },
  () => t.close(),
)

const put = (app: TestApp, body: unknown, query = '') => app.req('PUT', `/api/migrations${query}`, { token: app.adminToken, body })
const flagsOf = async (app: TestApp) => (await app.req('GET', '/api/flags', { token: app.adminToken })).body
const backups = (app: TestApp) => {
  try {
    return readdirSync(join(app.dataDir, 'backups'))
  } catch {
    return []
  }
}

group('export', () => {
  test('the document, its file name, and nothing but flags', async () => {
    await t.req('POST', '/api/flags', {
      token: t.adminToken,
      body: { name: 'exp/int', type: 'INTEGER', defaultValue: 2, value: 3, maxValue: 9 },
    })
    await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'exp/a', type: 'BOOLEAN' } })
    for (const [path, token] of [
      ['/api/migrations/export', t.adminToken],
      ['/migration/export', undefined],
    ] as const) {
      const res = await t.req('GET', path, { token })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-disposition')).toMatch(/^attachment; filename="flagd_migration_production_\d{8}-\d{6}\.json"$/)
      expect(Object.keys(res.body)).toEqual(['environment', 'version', 'createdAt', 'flags'])
      expect(res.body).toMatchObject({ environment: 'production', version: '1.0.0' })
      expect(res.body.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      expect(Object.keys(res.body.flags)).toEqual(['exp/a', 'exp/int'])
      expect(res.body.flags['exp/int']).toEqual({
        description: '',
        type: 'INTEGER',
        defaultValue: 2,
        valueExists: true,
        value: 3,
        maxValue: 9,
        enabled: true,
      })
      expect(Object.keys(res.body.flags['exp/a'])).toEqual(['description', 'type', 'defaultValue', 'valueExists', 'enabled'])
      const secret = readFileSync(join(t.dataDir, 'jwt-secret'), 'utf8').trim()
      expect(res.text).not.toContain(secret)
      expect(res.text).not.toContain('argon2')
      expect(res.text).not.toContain('ses_')
    }
  })

  test('/api/migrations/export needs migration:read', async () => {
    const u = await t.userWith(['flag:read'])
    expect((await t.req('GET', '/api/migrations/export', { token: u.token })).status).toBe(403)
    expect((await t.req('GET', '/api/migrations/export')).status).toBe(401)
  })

  test('publicExport: false turns the public route off', async () => {
    const app = await createTestApp({ FLAGD_PUBLIC_EXPORT: 'false' })
    expect((await app.req('GET', '/migration/export')).status).toBe(404)
    expect((await app.req('GET', '/api/migrations/export', { token: app.adminToken })).status).toBe(200)
    await app.close()
  })
})

group('import', () => {
  test('round trip: export → import into an empty instance → identical flags', async () => {
    const source = await createTestApp()
    await put(source, fixture('flagflow-1.7-export.json'))
    await source.req('POST', '/api/flags', {
      token: source.adminToken,
      body: { name: 'rt/tag', type: 'TAG', enumValues: ['x', 'y'], value: ['y'], minCount: 1, defaultValue: ['x'] },
    })
    const exported = (await source.req('GET', '/api/migrations/export', { token: source.adminToken })).body
    const target = await createTestApp()
    const res = await put(target, exported)
    expect(res.status).toBe(200)
    expect(res.body.summary.created).toBe(Object.keys(exported.flags).length)
    const again = (await target.req('GET', '/api/migrations/export', { token: target.adminToken })).body
    expect(again.flags).toEqual(exported.flags)
    expect(JSON.stringify(again.flags)).toBe(JSON.stringify(exported.flags))
    await source.close()
    await target.close()
  })

  test('merge creates and updates named flags, leaves others; the same file twice changes nothing', async () => {
    const app = await createTestApp({ FLAGD_ENVIRONMENT: 'production' })
    await app.req('POST', '/api/flags', { token: app.adminToken, body: { name: 'other/flag', type: 'BOOLEAN' } })
    await app.req('POST', '/api/flags', {
      token: app.adminToken,
      body: { name: 'app/max_retries', type: 'INTEGER', defaultValue: 3, value: 7, maxValue: 20 },
    })
    const first = await put(app, fixture('valid-merge.json'))
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({
      dryRun: false,
      mode: 'merge',
      values: 'overwrite',
      source: { environment: 'staging', version: '1.0.0' },
    })
    expect(first.body.summary).toEqual({ created: 2, updated: 1, deleted: 0, unchanged: 0 })
    expect(first.body.changes).toContainEqual({
      name: 'app/max_retries',
      action: 'update',
      fields: ['description', 'value', 'minValue', 'maxValue'],
    })
    expect(first.body.backup).toMatch(/^flagd_migration_production_\d{8}-\d{6}(-\d+)?\.json$/)
    const saved = JSON.parse(readFileSync(join(app.dataDir, 'backups', first.body.backup), 'utf8'))
    expect(saved.flags['app/max_retries'].value).toBe(7)
    expect(Object.keys(saved.flags)).toEqual(['app/max_retries', 'other/flag'])
    const names = (await flagsOf(app)).map((f: { name: string }) => f.name)
    expect(names).toEqual(['app/max_retries', 'app/new_checkout', 'other/flag', 'ui/theme'])
    const revision = (await app.req('GET', '/api/flags/app/max_retries', { token: app.adminToken })).body.revision
    expect(revision).toBe(2)
    const second = await put(app, fixture('valid-merge.json'))
    expect(second.body.summary).toEqual({ created: 0, updated: 0, deleted: 0, unchanged: 3 })
    expect(second.body.changes).toEqual([])
    expect(second.body.backup).toBeNull()
    expect(backups(app)).toHaveLength(1)
    await app.close()
  })

  test('replace also deletes flags the file does not name', async () => {
    const app = await createTestApp()
    await app.req('POST', '/api/flags', { token: app.adminToken, body: { name: 'gone/flag', type: 'BOOLEAN' } })
    const res = await put(app, fixture('valid-merge.json'), '?mode=replace')
    expect(res.body.summary).toEqual({ created: 3, updated: 0, deleted: 1, unchanged: 0 })
    expect(res.body.changes).toContainEqual({ name: 'gone/flag', action: 'delete', fields: [] })
    expect((await flagsOf(app)).map((f: { name: string }) => f.name)).toEqual(['app/max_retries', 'app/new_checkout', 'ui/theme'])
    const empty = await put(app, fixture('valid-empty.json'), '?mode=replace')
    expect(empty.body.summary.deleted).toBe(3)
    expect(empty.body.backup).not.toBeNull()
    expect(await flagsOf(app)).toEqual([])
    const mergeEmpty = await put(app, fixture('valid-empty.json'))
    expect(mergeEmpty.body.summary).toEqual({ created: 0, updated: 0, deleted: 0, unchanged: 0 })
    await app.close()
  })

  test('values=keep promotes definitions and keeps current values (or their absence)', async () => {
    const app = await createTestApp()
    await app.req('POST', '/api/flags', {
      token: app.adminToken,
      body: { name: 'app/max_retries', type: 'INTEGER', defaultValue: 2, value: 8, maxValue: 9 },
    })
    await app.req('POST', '/api/flags', { token: app.adminToken, body: { name: 'app/new_checkout', type: 'BOOLEAN' } })
    const res = await put(app, fixture('valid-merge.json'), '?values=keep')
    expect(res.status).toBe(200)
    const flags = Object.fromEntries((await flagsOf(app)).map((f: { name: string }) => [f.name, f]))
    expect(flags['app/max_retries']).toMatchObject({ value: 8, maxValue: 10, defaultValue: 3, description: 'Retry budget' })
    expect(flags['app/new_checkout'].valueExists).toBe(false)
    expect(flags['ui/theme']).toMatchObject({ valueExists: false })
    const refused = await put(app, fixture('valid-tighter-constraints.json'), '?values=keep')
    expect(refused.status).toBe(400)
    expect(refused.body.error.details.errors).toEqual([
      { field: 'flags.app/max_retries.value', reason: expect.stringContaining('8 is above maxValue 4') },
    ])
    expect(flags['app/max_retries'].revision).toBe(
      (await app.req('GET', '/api/flags/app/max_retries', { token: app.adminToken })).body.revision,
    )
    await app.close()
  })

  test('with diff=true, updates carry their values before and after: the first 100, only for a caller who may read flags', async () => {
    const app = await createTestApp()
    try {
      const flags: Record<string, unknown> = {}
      for (let i = 0; i < 101; i++) flags[`n/f${String(i).padStart(3, '0')}`] = { type: 'INTEGER', defaultValue: 1, valueExists: false }
      const doc = { environment: 'x', version: '1.0.0', createdAt: '2026-11-22T10:15:00.123Z', flags }
      expect((await put(app, doc)).status).toBe(200)
      for (const f of Object.values(flags) as Record<string, unknown>[]) Object.assign(f, { valueExists: true, value: 2 })
      expect((await put(app, doc, '?dryRun=true')).body.changes[0]).toEqual({
        name: 'n/f000',
        action: 'update',
        fields: ['valueExists', 'value'],
      })
      const res = await put(app, doc, '?dryRun=true&diff=true')
      expect(res.body.changes[0]).toEqual({
        name: 'n/f000',
        action: 'update',
        fields: ['valueExists', 'value'],
        diff: { valueExists: { before: false, after: true }, value: { after: 2 } },
      })
      expect(res.body.changes[99].diff).toBeDefined()
      expect(res.body.changes[100]).toEqual({ name: 'n/f100', action: 'update', fields: ['valueExists', 'value'] })

      const made = await app.req('POST', '/api/tokens', {
        token: app.adminToken,
        body: { name: 'importer', permissions: ['migration:write'] },
      })
      const blind = await app.req('PUT', '/api/migrations?dryRun=true&diff=true', { token: made.body.token, body: doc })
      expect(blind.status).toBe(200)
      expect(blind.body.changes.every((c: { diff?: unknown }) => c.diff === undefined)).toBe(true)
    } finally {
      await app.close()
    }
  })

  test('dryRun reports, changes nothing, writes no backup', async () => {
    const app = await createTestApp()
    const before = await flagsOf(app)
    const res = await put(app, fixture('valid-merge.json'), '?dryRun=true&mode=replace&values=keep')
    expect(res.body).toMatchObject({ dryRun: true, mode: 'replace', values: 'keep', backup: null, summary: { created: 3 } })
    expect(await flagsOf(app)).toEqual(before)
    expect(backups(app)).toEqual([])
    await app.close()
  })

  test.each([
    ['invalid-enum-value.json', ['flags.ui/theme.value']],
    ['invalid-three-errors.json', ['flags.app/max_retries.value', 'flags.app/mode.type', 'flags.ui/banner.regexPattern']],
    ['invalid-version.json', ['version']],
    ['invalid-proto-key.json', ['flags.a.__proto__']],
    ['invalid-unknown-field.json', ['users']],
    ['invalid-flag-group.json', ['flags.app']],
  ])('%s reports every error and changes nothing', async (file, fields) => {
    const app = await createTestApp()
    await app.req('POST', '/api/flags', { token: app.adminToken, body: { name: 'keep/me', type: 'BOOLEAN' } })
    const before = await flagsOf(app)
    const res = await app.req('PUT', '/api/migrations?mode=replace', {
      token: app.adminToken,
      rawBody: fixtureText(file),
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(400)
    expect(res.body.error.code).toBe('INVALID_REQUEST')
    expect(res.body.error.details.errors.map((e: { field: string }) => e.field).sort()).toEqual([...fields].sort())
    expect(await flagsOf(app)).toEqual(before)
    expect(backups(app)).toEqual([])
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    await app.close()
  })

  test.each([['?mode=merged'], ['?values=yes'], ['?dryRun=1'], ['?force=true']])('bad option %s → 400', async (query) => {
    expect((await put(t, fixture('valid-merge.json'), query)).status).toBe(400)
  })

  test('a merge that would make a flag and a group collide with existing flags is refused', async () => {
    const app = await createTestApp()
    await app.req('POST', '/api/flags', { token: app.adminToken, body: { name: 'app', type: 'BOOLEAN' } })
    const res = await put(app, fixture('valid-merge.json'))
    expect(res.status).toBe(400)
    expect(res.body.error.details.errors.map((e: { field: string }) => e.field)).toContain('flags.app/max_retries')
    await app.close()
  })

  test('needs migration:write; the body limit is 16 MiB here', async () => {
    const u = await t.userWith(['migration:read', 'flag:write'])
    expect((await t.req('PUT', '/api/migrations', { token: u.token, body: fixture('valid-merge.json') })).status).toBe(403)
    const big = { ...fixture('valid-empty.json'), flags: { pad: { type: 'STRING', description: 'x'.repeat(2 * 1024 * 1024) } } }
    const res = await put(t, big)
    expect(res.status).toBe(400) // read (under 16 MiB), then refused for the long description
    expect(res.body.error.details.errors[0].field).toBe('flags.pad.description')
  })

  test('keeps the newest 50 backups', async () => {
    const app = await createTestApp()
    const dir = join(app.dataDir, 'backups')
    mkdirSync(dir, { recursive: true })
    for (let i = 0; i < 55; i++) {
      const path = join(dir, `flagd_migration_old_20200101-0000${String(i).padStart(2, '0')}.json`)
      writeFileSync(path, '{}')
      utimesSync(path, 1_600_000_000 + i, 1_600_000_000 + i)
    }
    const res = await put(app, fixture('valid-merge.json'))
    const left = backups(app)
    expect(left).toHaveLength(50)
    expect(left).toContain(res.body.backup)
    expect(left).not.toContain('flagd_migration_old_20200101-000000.json')
    await app.close()
  })
})

group('FlagFlow 1.7 files', () => {
  test('import with FlagFlow conventions', async () => {
    const app = await createTestApp()
    const res = await put(app, fixture('flagflow-1.7-export.json'))
    expect(res.status).toBe(200)
    expect(res.body.source).toEqual({ environment: 'PEER', version: '1.7.1', createdAt: '2026-11-22T06:46:10.148Z' })
    const flags = Object.fromEntries((await flagsOf(app)).map((f: any) => [f.name, f]))
    expect(flags['ui/banner_text']).toMatchObject({ regexPattern: '^[a-z ]+$', maxLength: 40, valueExists: false })
    expect('value' in flags['ui/banner_text']).toBe(false)
    expect(flags['ui/modules']).toMatchObject({ enumValues: ['core', 'chat', 'ai'], minCount: 1, value: ['core', 'ai'] })
    expect('maxCount' in flags['ui/modules']).toBe(false)
    expect(flags['experiments/pricing_page']).toMatchObject({ chancePercentB: 25.5, defaultValue: 'A', valueExists: false })
    expect(flags['checkout/new_flow']).toMatchObject({ value: true })
    expect('isKillSwitch' in flags['checkout/new_flow']).toBe(false)
    expect('allowEmpty' in flags['ui/theme']).toBe(false)
    // nothing vanishes silently: every translation and every dropped field is listed
    const warned = res.body.warnings.map((w: { field: string }) => w.field)
    expect(warned).toContain('flags.checkout/new_flow.isKillSwitch')
    expect(warned).toContain('flags.ui/theme.allowEmpty')
    expect(warned).toContain('flags.ui/modules.tagValues')
    expect(warned).toContain('flags.ui/modules.maxCount')
    expect(res.body.warnings.find((w: { field: string }) => w.field === 'flags.checkout/new_flow.isKillSwitch').reason).toContain(
      'no kill switches',
    )
    // a dry run reports them too; a flagd export has none
    expect((await put(app, fixture('flagflow-1.7-export.json'), '?dryRun=true')).body.warnings.length).toBe(res.body.warnings.length)
    const own = await app.req('GET', '/api/migrations/export', { token: app.adminToken })
    expect((await put(app, own.body)).body.warnings).toEqual([])
    await app.close()
  })
})
