/**
 * Other tools' files in the drop folder (docs/migrations.md#from-other-tools): `.yaml`, `.yml` and
 * `.toml` are read too, each file's tool recognised by its content; a YAML file of no tool that
 * writes YAML, or one that cannot be parsed, fails with the reason and applies nothing.
 */

import { afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { eventually } from '../helpers/eventually.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

setDefaultTimeout(30_000)
const FLIPT = join(import.meta.dir, '../fixtures/foreign/flipt')
let apps: TestApp[] = []
afterEach(async () => {
  for (const a of apps) await a.close()
  apps = []
})

const list = (dir: string, sub: string) =>
  existsSync(join(dir, sub))
    ? readdirSync(join(dir, sub))
        .filter((n) => !n.includes('.tmp-'))
        .sort()
    : []
const reportOf = (dir: string, sub: string, suffix: string) =>
  JSON.parse(readFileSync(join(dir, sub, list(dir, sub).find((n) => n.endsWith(suffix)) as string), 'utf8'))

test("Flipt's YAML and TOML files dropped in are recognised and imported; the result names the format and what was skipped", async () => {
  const t = await createTestApp({ FLAGD_IMPORT_SETTLE_MS: '0', FLAGD_IMPORT_RESCAN_MS: '200' })
  apps.push(t)
  const dir = join(t.dataDir, 'import')
  mkdirSync(dir, { recursive: true })
  copyFileSync(join(FLIPT, 'export.yml'), join(dir, 'a-flipt.yml'))
  copyFileSync(join(FLIPT, 'small.toml'), join(dir, 'b-flipt.toml'))
  await t.app.watcher.start()
  await eventually(() => list(dir, 'processed').filter((n) => n.endsWith('.result.json')).length === 2, { within: 15_000, every: 50 })
  const result = reportOf(dir, 'processed', 'a-flipt.yml.result.json')
  expect(result.source.format).toBe('flipt')
  expect(result.skipped.map((s: { name: string }) => s.name).sort()).toEqual(['greeting', 'release-date'])
  expect(list(dir, 'failed')).toEqual([])
  const flags = (await t.req('GET', '/api/flags', { token: t.adminToken })).body.map((f: { name: string }) => f.name)
  expect(flags).toContain('toml-switch')
  expect(flags).toContain('checkout-theme')
})

test('a YAML file no tool wrote, and an unreadable one, fail with the reason and apply nothing', async () => {
  const t = await createTestApp({ FLAGD_IMPORT_SETTLE_MS: '0', FLAGD_IMPORT_RESCAN_MS: '200' })
  apps.push(t)
  const dir = join(t.dataDir, 'import')
  mkdirSync(dir, { recursive: true })
  writeFileSync(
    join(dir, 'a-stranger.yaml'),
    'environment: x\nversion: 1.0.0\ncreatedAt: 2026-01-01T00:00:00Z\nflags:\n  a:\n    type: BOOLEAN\n',
  )
  writeFileSync(join(dir, 'b-broken.yaml'), 'flags: [\n')
  await t.app.watcher.start()
  await eventually(() => list(dir, 'failed').filter((n) => n.endsWith('.error.json')).length === 2, { within: 15_000, every: 50 })
  expect(reportOf(dir, 'failed', 'a-stranger.yaml.error.json').error.message).toContain('Flipt or GO Feature Flag file only')
  expect(reportOf(dir, 'failed', 'b-broken.yaml.error.json').error.message).toContain('not valid YAML')
  expect((await t.req('GET', '/api/flags', { token: t.adminToken })).body).toEqual([])
})

test('the log line of an import that skipped flags says how many, and where they are listed', async () => {
  const { createImportWatcher } = await import('../../src/watcher/import-watcher.ts')
  const { prepareDropFolder } = await import('../../src/watcher/drop-folder.ts')
  const t = await createTestApp()
  apps.push(t)
  const dir = join(t.dataDir, 'elsewhere')
  await prepareDropFolder(dir)
  const lines: string[] = []
  const watcher = createImportWatcher(t.app.services.migrations, {
    now: () => new Date('2026-12-01T00:00:00Z'),
    watchDir: dir,
    settleMs: 0,
    rescanMs: 60_000,
    mode: 'merge',
    values: 'overwrite',
    maxBytes: 1 << 20,
    log: (line) => lines.push(line),
  })
  copyFileSync(join(FLIPT, 'export.yml'), join(dir, 'flipt.yml'))
  await watcher.scan() // first sight: size and mtime recorded
  await watcher.scan() // unchanged since: imported
  expect(lines.find((l) => l.startsWith('imported flipt.yml'))).toMatch(/; 2 skipped \(listed in processed\/.*_flipt\.yml\.result\.json\)$/)
  await watcher.stop()
})
