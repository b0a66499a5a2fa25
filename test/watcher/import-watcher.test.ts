/** docs/migrations.md: the watched import folder, on a real file system. */

import { afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import {
  appendFileSync,
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { RefusedFile, readDroppedFile } from '../../src/watcher/drop-folder.ts'
import { capturedLogger } from '../helpers/captured-logger.ts'
import { eventually } from '../helpers/eventually.ts'
import { fixture } from '../helpers/fixtures.ts'
import { createTestApp, type TestApp, tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(30_000)

// a short settle time: most tests drop whole files at once; the one about slow writers sets its own
const ENV = { FLAGD_IMPORT_SETTLE_MS: '60', FLAGD_IMPORT_RESCAN_MS: '400' }
let apps: TestApp[] = []
afterEach(async () => {
  for (const a of apps) await a.close()
  apps = []
})

/** How far the watcher's clock runs ahead of the wall clock: a test moves it past the settle time instead of sleeping. */
let ahead = 0
async function started(env: Record<string, string> = {}, before?: (dir: string) => void): Promise<{ t: TestApp; dir: string }> {
  const t = await createTestApp({ ...ENV, ...env }, { now: () => new Date(Date.now() + ahead) })
  apps.push(t)
  const dir = join(t.dataDir, 'import')
  if (before) {
    mkdirSync(dir, { recursive: true })
    before(dir)
  }
  await t.app.watcher.start()
  return { t, dir }
}

const docWith = (flags: Record<string, unknown>) =>
  JSON.stringify({ environment: 'ops', version: '1.0.0', createdAt: '2026-11-22T10:15:00.123Z', flags })
/** The files in `dir/sub`, without a report still being written (the atomic writer's temp file). */
const list = (dir: string, sub: string) =>
  existsSync(join(dir, sub))
    ? readdirSync(join(dir, sub))
        .filter((n) => !n.includes('.tmp-'))
        .sort()
    : []

/** Waits for the watcher to have handled what `check` looks for (a deadline against a hang). */
const until = (check: () => boolean, ms = 15_000) => eventually(check, { within: ms, every: 50 })

test('50 files dropped at once all end in processed/, none lost, none applied twice', async () => {
  const { t, dir } = await started()
  for (let i = 0; i < 50; i++) {
    const name = `drop-${String(i).padStart(2, '0')}.json`
    writeFileSync(join(dir, `.${name}.tmp`), docWith({ [`bulk/f${i}`]: { type: 'INTEGER', value: i } }))
    renameSync(join(dir, `.${name}.tmp`), join(dir, name))
  }
  await until(() => list(dir, 'processed').filter((n) => n.endsWith('.result.json')).length === 50)
  const processed = list(dir, 'processed')
  expect(processed.filter((n) => !n.endsWith('.result.json'))).toHaveLength(50)
  expect(processed[0]).toMatch(/^\d{8}-\d{6}_drop-00\.json$/)
  expect(list(dir, 'failed')).toEqual([])
  expect(readdirSync(dir).filter((n) => n.endsWith('.json'))).toEqual([])
  const flags = (await t.req('GET', '/api/flags?prefix=bulk/', { token: t.adminToken })).body
  expect(flags).toHaveLength(50)
  expect(flags.every((f: { revision: number }) => f.revision === 1)).toBe(true)
  const result = JSON.parse(readFileSync(join(dir, 'processed', processed.find((n) => n.endsWith('.result.json')) as string), 'utf8'))
  expect(result).toMatchObject({ dryRun: false, mode: 'merge', values: 'overwrite', summary: { created: 1 } })
})

test('a file written slowly in pieces is not read before it settles', async () => {
  const { t, dir } = await started({ FLAGD_IMPORT_SETTLE_MS: '400' })
  const text = docWith({ 'slow/flag': { type: 'STRING', value: 'x'.repeat(1000) } })
  const path = join(dir, 'slow.json')
  const pieces = 6
  const size = Math.ceil(text.length / pieces)
  for (let i = 0; i < pieces; i++) {
    appendFileSync(path, text.slice(i * size, (i + 1) * size))
    await Bun.sleep(150)
  }
  await until(() => list(dir, 'processed').length + list(dir, 'failed').length >= 2)
  expect(list(dir, 'failed')).toEqual([])
  expect((await t.req('GET', '/api/flags/slow/flag', { token: t.adminToken })).status).toBe(200)
})

test('a refused drop file is logged at warn, so alerting on warnings sees it; an applied one at info', async () => {
  const { logger, lines } = capturedLogger()
  const t = await createTestApp(ENV, { logger })
  apps.push(t)
  const dir = join(t.dataDir, 'import')
  await t.app.watcher.start()
  writeFileSync(join(dir, 'broken.json'), '{ "environment": ')
  writeFileSync(join(dir, 'good.json'), docWith({ 'logged/flag': { type: 'BOOLEAN' } }))
  // the line is logged once the file has moved: wait for both
  const refusedLine = () => lines.find((l) => String(l.msg).startsWith('import of broken.json failed'))
  const appliedLine = () => lines.find((l) => String(l.msg).includes('good.json'))
  await until(() => list(dir, 'failed').length === 2 && list(dir, 'processed').length === 2 && !!refusedLine() && !!appliedLine())
  const refused = refusedLine()
  expect(refused?.level).toBe(40) // pino's warn
  const applied = appliedLine()
  expect(applied?.level).toBe(30) // info
})

test('non-JSON and invalid documents land in failed/ with a reason; nothing is applied', async () => {
  const { t, dir } = await started()
  writeFileSync(join(dir, 'broken.json'), '{ "environment": ')
  writeFileSync(join(dir, 'invalid.json'), readFileSync(join(import.meta.dir, '../fixtures/invalid-three-errors.json')))
  await until(() => list(dir, 'failed').length === 4)
  const failed = list(dir, 'failed')
  const broken = JSON.parse(readFileSync(join(dir, 'failed', failed.find((n) => n.endsWith('broken.json.error.json')) as string), 'utf8'))
  expect(broken).toMatchObject({
    file: 'broken.json',
    at: expect.any(String),
    error: { code: 'INVALID_REQUEST', message: expect.stringContaining('not valid JSON') },
  })
  const invalid = JSON.parse(readFileSync(join(dir, 'failed', failed.find((n) => n.endsWith('invalid.json.error.json')) as string), 'utf8'))
  expect(invalid.error.details.errors).toHaveLength(3)
  expect((await t.req('GET', '/api/flags', { token: t.adminToken })).body).toEqual([])
})

test('a symbolic link is refused: the link itself moves to failed/, its target is untouched', async () => {
  const { dir, t } = await started()
  const target = join(t.dataDir, 'outside.json')
  writeFileSync(target, docWith({ 'link/flag': { type: 'BOOLEAN' } }))
  symlinkSync(target, join(dir, 'link.json'))
  await until(() => list(dir, 'failed').length === 2)
  const moved = list(dir, 'failed').find((n) => n.endsWith('_link.json')) as string
  expect(lstatSync(join(dir, 'failed', moved)).isSymbolicLink()).toBe(true)
  expect(existsSync(target)).toBe(true)
  expect((await t.req('GET', '/api/flags/link/flag', { token: t.adminToken })).status).toBe(404)
})

test('files present at start are processed in name order; dotfiles and other names are left alone', async () => {
  const { t, dir } = await started({}, (d) => {
    writeFileSync(join(d, 'b.json'), docWith({ 'order/x': { type: 'INTEGER', value: 2 } }))
    writeFileSync(join(d, 'a.json'), docWith({ 'order/x': { type: 'INTEGER', value: 1 } }))
    writeFileSync(join(d, '.hidden.json'), 'ignored')
    writeFileSync(join(d, 'notes.txt'), 'ignored')
    writeFileSync(join(d, 'partial.json.tmp'), 'ignored')
  })
  await until(() => list(dir, 'processed').length === 4)
  expect((await t.req('GET', '/api/flags/order/x', { token: t.adminToken })).body).toMatchObject({ value: 2, revision: 2 })
  expect(readdirSync(dir).sort()).toEqual(['.hidden.json', 'failed', 'notes.txt', 'partial.json.tmp', 'processed'])
})

test('the same name dropped twice is kept twice in processed/', async () => {
  const { dir } = await started()
  writeFileSync(join(dir, 'same.json'), JSON.stringify(fixture('valid-merge.json')))
  await until(() => list(dir, 'processed').length === 2)
  writeFileSync(join(dir, 'same.json'), JSON.stringify(fixture('valid-merge.json')))
  await until(() => list(dir, 'processed').length === 4)
  const names = list(dir, 'processed').filter((n) => !n.endsWith('.result.json'))
  expect(names).toHaveLength(2)
  if (names[0]?.slice(0, 15) === names[1]?.slice(0, 15)) expect(names.some((n) => n.endsWith('_same-2.json'))).toBe(true)
})

test('the rescan alone finds files: events are only hints', async () => {
  const { createImportWatcher } = await import('../../src/watcher/import-watcher.ts')
  const { prepareDropFolder } = await import('../../src/watcher/drop-folder.ts')
  const t = await createTestApp()
  apps.push(t)
  const dir = join(t.dataDir, 'elsewhere')
  await prepareDropFolder(dir)
  // never started: no chokidar, no timers; only explicit scans, as the periodic rescan would run them
  const watcher = createImportWatcher(t.app.services.migrations, {
    now: () => new Date('2026-12-01T00:00:00Z'),
    watchDir: dir,
    settleMs: 0,
    rescanMs: 60_000,
    mode: 'merge',
    values: 'overwrite',
    maxBytes: 1 << 20,
  })
  writeFileSync(join(dir, 'quiet.json'), JSON.stringify(fixture('valid-merge.json')))
  await watcher.scan() // first sight: size and mtime recorded
  expect(list(dir, 'processed')).toEqual([])
  await watcher.scan() // unchanged since: imported
  expect(list(dir, 'processed')).toHaveLength(2)
  expect((await t.req('GET', '/api/flags/ui/theme', { token: t.adminToken })).status).toBe(200)
  await watcher.stop()
})

test('a 245-character name is imported once, moved under a shortened name, never re-imported', async () => {
  const { t, dir } = await started()
  const name = `${'n'.repeat(240)}.json`
  writeFileSync(join(dir, name), docWith({ 'long/f': { type: 'INTEGER', value: 1 } }))
  await until(() => list(dir, 'processed').length === 2)
  const moved = list(dir, 'processed').find((n) => !n.endsWith('.result.json')) as string
  expect(moved.endsWith('.json')).toBe(true)
  expect(Buffer.byteLength(`${moved}.result.json`)).toBeLessThanOrEqual(255)
  expect(readdirSync(dir).filter((n) => n.endsWith('.json'))).toEqual([])
  // an API edit after the import is not undone by later scans
  expect((await t.req('PUT', '/api/flags/long/f', { token: t.adminToken, body: { value: 2 } })).status).toBe(200)
  await t.app.watcher.scan()
  ahead += 500 // past the settle time: a file still there would be read now
  await t.app.watcher.scan()
  expect((await t.req('GET', '/api/flags/long/f', { token: t.adminToken })).body).toMatchObject({ value: 2, revision: 2 })
})

test('a file that is not valid UTF-8 fails like invalid JSON, nothing applied, and is counted', async () => {
  const { t, dir } = await started()
  const text = docWith({ 'utf/f': { type: 'STRING', value: 'XX' } })
  const bytes = Buffer.from(text)
  bytes[bytes.indexOf('XX')] = 0xff // a lone byte that is not UTF-8
  writeFileSync(join(dir, 'bad-bytes.json'), bytes)
  await until(() => list(dir, 'failed').length === 2)
  const report = JSON.parse(readFileSync(join(dir, 'failed', list(dir, 'failed').find((n) => n.endsWith('.error.json')) as string), 'utf8'))
  expect(report.error.message).toContain('not valid UTF-8')
  expect((await t.req('GET', '/api/flags/utf/f', { token: t.adminToken })).status).toBe(404)
  expect((await t.req('GET', '/metrics')).text).toContain('flagd_imports_total{source="drop-folder",outcome="invalid"} 1')
})

test('a file nested deeper than 32 levels fails naming the depth before it is parsed; nothing applied', async () => {
  const { t, dir } = await started()
  writeFileSync(join(dir, 'deep.json'), `{"environment":"x","flags":{"deep/f":{"type":"STRING"}},"pad":${'['.repeat(1024 * 1024)}`)
  await until(() => list(dir, 'failed').length === 2)
  const report = JSON.parse(readFileSync(join(dir, 'failed', list(dir, 'failed').find((n) => n.endsWith('.error.json')) as string), 'utf8'))
  expect(report.error).toEqual({ code: 'INVALID_REQUEST', message: 'the file is nested deeper than 32 levels' })
  expect((await t.req('GET', '/api/flags/deep/f', { token: t.adminToken })).status).toBe(404)
})

test('folders are 0700 and moved files 0600, even when the folder existed with 0755', async () => {
  const { dir } = await started({}, (d) => {
    chmodSync(d, 0o755)
    writeFileSync(join(d, 'perm.json'), docWith({ 'perm/f': { type: 'BOOLEAN' } }), { mode: 0o644 })
  })
  await until(() => list(dir, 'processed').length === 2)
  for (const d of [dir, join(dir, 'processed'), join(dir, 'failed')]) expect(statSync(d).mode & 0o777).toBe(0o700)
  for (const f of list(dir, 'processed')) expect(statSync(join(dir, 'processed', f)).mode & 0o777).toBe(0o600)
})

test('reading never follows a link or waits on a FIFO, even when a file is swapped after the scan', async () => {
  const outside = tempDir()
  try {
    writeFileSync(join(outside, 'secret.json'), docWith({ 'stolen/f': { type: 'BOOLEAN' } }), { mode: 0o600 })
    symlinkSync(join(outside, 'secret.json'), join(outside, 'link.json'))
    await expect(readDroppedFile(join(outside, 'link.json'), 1 << 20)).rejects.toBeInstanceOf(RefusedFile)
    Bun.spawnSync(['mkfifo', join(outside, 'fifo')])
    symlinkSync(join(outside, 'fifo'), join(outside, 'fifo-link.json'))
    // a FIFO with no writer would block a plain open for ever: these settle (or the test times out)
    await expect(readDroppedFile(join(outside, 'fifo'), 1 << 20)).rejects.toThrow('not a regular file')
    await expect(readDroppedFile(join(outside, 'fifo-link.json'), 1 << 20)).rejects.toBeInstanceOf(RefusedFile)
    expect(readFileSync(join(outside, 'secret.json'), 'utf8')).toContain('stolen/f')
  } finally {
    rmSync(outside, { recursive: true, force: true })
  }
})

test('a file imported but impossible to move is never imported twice, and does not hold up the next', async () => {
  const { t, dir } = await started()
  rmSync(join(dir, 'processed'), { recursive: true })
  writeFileSync(join(dir, 'processed'), 'not a folder') // every move into processed/ now fails
  writeFileSync(join(dir, 'a-stuck.json'), docWith({ 'stuck/f': { type: 'INTEGER', value: 1 } }))
  writeFileSync(join(dir, 'b-bad.json'), 'not json')
  await until(() => list(dir, 'failed').length === 2) // the file after it was handled
  expect((await t.req('GET', '/api/flags/stuck/f', { token: t.adminToken })).body.revision).toBe(1)
  expect((await t.req('PUT', '/api/flags/stuck/f', { token: t.adminToken, body: { value: 2 } })).status).toBe(200)
  for (let i = 0; i < 3; i++) {
    ahead += 400
    await t.app.watcher.scan()
  }
  expect((await t.req('GET', '/api/flags/stuck/f', { token: t.adminToken })).body).toMatchObject({ value: 2, revision: 2 })
  expect(existsSync(join(dir, 'a-stuck.json'))).toBe(true) // left in place, never deleted
})

test('a drop folder that cannot be used stops with a sentence naming it, never bare errno text', async () => {
  const { prepareDropFolder } = await import('../../src/watcher/drop-folder.ts')
  const base = tempDir()
  try {
    writeFileSync(join(base, 'a-file'), 'x')
    for (const [watchDir, why] of [
      ['/proc', 'cannot use /proc/processed as the drop folder'],
      [join(base, 'a-file', 'import'), 'a part of its path is a file, not a directory'],
    ] as const) {
      const err = await prepareDropFolder(watchDir).catch((e: unknown) => e as Error)
      expect(err).toBeInstanceOf(Error)
      expect((err as Error).message).toContain(why)
      expect((err as Error).message).toContain('set import.watchDir')
      expect((err as Error).message).not.toMatch(/^E[A-Z]+:/)
    }
  } finally {
    rmSync(base, { recursive: true, force: true })
  }
})

test('a drop file whose name is not valid UTF-8 is moved to failed/ with a reason, not skipped for ever', async () => {
  const { dir } = await started({}, (d) => {
    writeFileSync(
      Buffer.concat([Buffer.from(`${d}/bad`), Buffer.from([0xff, 0xfe]), Buffer.from('name.json')]),
      docWith({ 'x/y': { type: 'BOOLEAN' } }),
    )
  })
  await until(() => list(dir, 'failed').some((n) => n.includes('name-not-utf8') && n.endsWith('.error.json')))
  const failed = list(dir, 'failed')
  const report = JSON.parse(readFileSync(join(dir, 'failed', failed.find((n) => n.endsWith('.error.json')) as string), 'utf8'))
  expect(report.error.message).toContain('not valid UTF-8')
  expect(report.fileBytesHex).toBe(Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe, ...Buffer.from('name.json')]).toString('hex'))
  expect(list(dir, '.').filter((n) => n.endsWith('.json'))).toEqual([])
})

test('a flagd document dropped in the folder imports like an upload: flags, segments, source.format flagd', async () => {
  const { t, dir } = await started()
  const flagd = {
    flags: {
      'dropped/rollout': {
        state: 'ENABLED',
        variants: { on: true, off: false },
        defaultVariant: 'off',
        targeting: { if: [{ $ref: 'staff' }, 'on'] },
      },
    },
    $evaluators: { staff: { ends_with: [{ var: 'email' }, '@example.com'] } },
  }
  writeFileSync(join(dir, '.flagd.json.tmp'), JSON.stringify(flagd))
  renameSync(join(dir, '.flagd.json.tmp'), join(dir, 'flagd.json'))
  await until(() => list(dir, 'processed').some((n) => n.endsWith('.result.json')))
  const resultName = list(dir, 'processed').find((n) => n.endsWith('.result.json')) as string
  const result = JSON.parse(readFileSync(join(dir, 'processed', resultName), 'utf8'))
  expect(result).toMatchObject({
    source: { format: 'flagd' },
    summary: { created: 1 },
    segmentChanges: [{ name: 'staff', action: 'create' }],
  })
  const answer = await t.req('POST', '/ofrep/v1/evaluate/flags/dropped/rollout', {
    token: t.adminToken,
    body: { context: { email: 'a@example.com' } },
  })
  expect(answer.body).toMatchObject({ value: true, reason: 'TARGETING_MATCH', variant: 'on' })
})

test("import.environment: dropped files set that environment's state, whatever the file's own environment says", async () => {
  const dataDir = tempDir()
  const envs = { ...ENV, FLAGD_ENVIRONMENT: 'production' }
  // the directory goes with the last app (owned), or with afterEach should a step fail before it
  const first = await createTestApp(envs, { dataDir })
  apps.push(first)
  const admin = (t: TestApp, method: string, path: string, body?: unknown) => t.req(method, path, { token: t.adminToken, body })
  expect((await admin(first, 'POST', '/api/flags', { name: 'f', type: 'INTEGER', value: 1 })).status).toBe(201)
  expect((await admin(first, 'PUT', '/api/environments/staging', {})).status).toBe(201)
  await first.close()
  apps = []
  // a key naming no environment stops the start, naming the key
  await expect(createTestApp({ ...envs, FLAGD_IMPORT_ENVIRONMENT: 'nowhere' }, { dataDir })).rejects.toThrow('import.environment')
  const t = await createTestApp({ ...envs, FLAGD_IMPORT_ENVIRONMENT: 'staging' }, { dataDir, ownsDataDir: true })
  apps.push(t)
  await t.app.watcher.start()
  const dir = join(t.dataDir, 'import')
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, '.f.tmp'), docWith({ f: { type: 'INTEGER', value: 5 } }))
  renameSync(join(dir, '.f.tmp'), join(dir, 'f.json'))
  await until(() => list(dir, 'processed').length === 2)
  expect((await admin(t, 'GET', '/api/flags/f?environment=staging')).body.value).toBe(5)
  expect((await admin(t, 'GET', '/api/flags/f')).body.value).toBe(1)
})
