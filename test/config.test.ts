/** Configuration values: every source, every kind of value, and the errors that name the key (docs/operations.md). */

import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, loadConfig } from '../src/config.ts'
import { envName } from '../src/config-schema.ts'
import { createTestApp, tempDir } from './helpers/test-app.ts'

const load = (env: Record<string, string>, flags = {}) => loadConfig({ cwd: '/srv/flagd', env, flags })

test('environment names are FLAGD_ plus the key path in upper snake case', () => {
  expect(envName('import.allowedHosts')).toBe('FLAGD_IMPORT_ALLOWED_HOSTS')
  expect(envName('auth.tokenTtl')).toBe('FLAGD_AUTH_TOKEN_TTL')
  expect(envName('dataDir')).toBe('FLAGD_DATA_DIR')
})

test('defaults', async () => {
  const c = await load({})
  expect(c).toMatchObject({ host: '127.0.0.1', port: 8080, dataDir: '/srv/flagd/data', environment: 'development', publicExport: true })
  expect(c.auth.tokenTtl).toBe(12 * 3600)
  expect(c.limits).toEqual({ bodyBytes: 1048576, importBytes: 16777216, maxFlags: 100_000, cacheBytes: 64 * 1024 * 1024 })
  expect(c.import).toMatchObject({ mode: 'merge', values: 'overwrite', settleMs: 1000, allowedHosts: [] })
  expect(Object.isFrozen(c.auth)).toBe(true)
})

test.each([
  ['30m', 1800],
  ['12h', 43200],
  ['7d', 604800],
  ['90', 90],
  ['90s', 90],
])('token lifetime %s is %d s', async (raw, seconds) => {
  expect((await load({ FLAGD_AUTH_TOKEN_TTL: raw })).auth.tokenTtl).toBe(seconds)
})

test('lists are comma-separated, booleans are words, flags win over the environment', async () => {
  const c = await load(
    { FLAGD_IMPORT_ALLOWED_HOSTS: ' a.example , 10.0.0.0/8,,', FLAGD_PUBLIC_EXPORT: 'off', FLAGD_PORT: '9000' },
    { port: '9100' },
  )
  expect(c.import.allowedHosts).toEqual(['a.example', '10.0.0.0/8'])
  expect(c.publicExport).toBe(false)
  expect(c.port).toBe(9100)
})

test.each([
  [{ FLAGD_PUBLIC_EXPORT: 'maybe' }, 'publicExport'],
  [{ FLAGD_AUTH_SECRET: 'too-short' }, 'auth.secret'],
  [{ FLAGD_IMPORT_MODE: 'overwrite' }, 'import.mode'],
  [{ FLAGD_AUTH_TOKEN_TTL: '59' }, 'auth.tokenTtl'],
  [{ FLAGD_PORT: '1.5' }, 'port'],
  [{ FLAGD_TRUST_PROXY: '10.0.0.0/8,proxy.local' }, 'trustProxy'],
])('%j is refused naming %s', async (env, key) => {
  const err = await load(env).catch((e: unknown) => e)
  expect(err).toBeInstanceOf(ConfigError)
  expect((err as Error).message).toContain(`invalid configuration: ${key} `)
})

test('a list written as JSON in the environment is refused, saying lists there are comma-separated', async () => {
  const refused = await load({ FLAGD_IMPORT_ALLOWED_HOSTS: '["127.0.0.1"]' }).then(
    () => undefined,
    (err: Error) => err,
  )
  expect(refused).toBeInstanceOf(ConfigError)
  expect(refused?.message).toContain('comma-separated')
  expect(refused?.message).toContain('FLAGD_IMPORT_ALLOWED_HOSTS')
})

test('a configured secret is used, and no secret file is generated', async () => {
  const dataDir = tempDir()
  const t = await createTestApp({ FLAGD_AUTH_SECRET: 'a-configured-secret-of-at-least-32-chars' }, { dataDir })
  expect(existsSync(join(dataDir, 'jwt-secret'))).toBe(false)
  const { SignJWT } = await import('jose')
  const claims = JSON.parse(Buffer.from(t.adminToken.split('.')[1] as string, 'base64url').toString())
  const mine = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode('a-configured-secret-of-at-least-32-chars'))
  expect((await t.req('GET', '/api/me', { token: mine })).status).toBe(200)
  await t.close()
  rmSync(dataDir, { recursive: true, force: true })
})

test('an unknown FLAGD_ variable is warned about, naming the closest setting', async () => {
  const warnings: string[] = []
  await loadConfig({
    cwd: '/srv/flagd',
    env: { FLAGD_PROT: '9000', FLAGD_ADMIN_USERNAME: 'admin', FLAGD_LOG_LEVEL: 'warn', HOME: '/root' },
    warn: (m) => warnings.push(m),
  })
  expect(warnings).toEqual(['environment variable FLAGD_PROT is not a flagd setting and is ignored; did you mean FLAGD_PORT?'])
})

test("OpenFeature's flagd provider variables are ignored without a warning (none steered into a daemon setting)", async () => {
  const warnings: string[] = []
  await loadConfig({
    cwd: '/srv/flagd',
    env: { FLAGD_SOURCE_SELECTOR: 'token=abc', FLAGD_RESOLVER: 'in-process', FLAGD_TLS: 'false', FLAGD_DEADLINE_MS: '500' },
    warn: (m) => warnings.push(m),
  })
  expect(warnings).toEqual([])
})

test('storage: file by default; a PostgreSQL URL alone selects postgres; postgres without a URL is refused', async () => {
  expect((await load({})).storage).toEqual({ backend: 'file', postgresUrl: undefined })
  const url = 'postgres://flagd:pw@db.internal:5432/flagd'
  expect((await load({ FLAGD_STORAGE_POSTGRES_URL: url })).storage).toEqual({ backend: 'postgres', postgresUrl: url })
  expect((await load({ FLAGD_STORAGE_POSTGRES_URL: url, FLAGD_STORAGE_BACKEND: 'file' })).storage.backend).toBe('file')
  await expect(load({ FLAGD_STORAGE_BACKEND: 'postgres' })).rejects.toThrow('storage.postgresUrl (FLAGD_STORAGE_POSTGRES_URL) is not set')
  await expect(load({ FLAGD_STORAGE_BACKEND: 'mysql' })).rejects.toThrow('storage.backend must be one of file, postgres')
})

test('a bad PostgreSQL URL or secret is named without echoing it', async () => {
  const error = await load({ FLAGD_STORAGE_POSTGRES_URL: 'mysql://flagd:hunter2-secret@db/flagd' }).catch((e: Error) => e)
  expect(error).toBeInstanceOf(ConfigError)
  expect((error as Error).message).toContain('storage.postgresUrl must start with postgres:// or postgresql://')
  expect((error as Error).message).not.toContain('hunter2')
  const short = await load({ FLAGD_AUTH_SECRET: 'too-short-hunter2' }).catch((e: Error) => e)
  expect((short as Error).message).not.toContain('hunter2')
})

describe('a JSON config file (flagd.config.json, or --config x.json)', () => {
  const dirs: string[] = []
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true })
  })
  const cwdWith = (files: Record<string, string>) => {
    const cwd = tempDir()
    dirs.push(cwd)
    for (const [name, text] of Object.entries(files)) writeFileSync(join(cwd, name), text)
    return cwd
  }
  const refusal = (cwd: string, configPath?: string) =>
    loadConfig({ cwd, env: {}, configPath }).then(
      () => undefined,
      (e: unknown) => e as Error,
    )

  test('is read from the working directory like flagd.config.ts, nested groups and all, below the environment', async () => {
    const cwd = cwdWith({
      'flagd.config.json': JSON.stringify({
        environment: 'from-json',
        port: 9001,
        import: { settleMs: 250 },
        cors: { origins: ['https://app.example'] },
      }),
    })
    const c = await loadConfig({ cwd, env: { FLAGD_PORT: '9002' } })
    expect(c).toMatchObject({ environment: 'from-json', port: 9002, import: { settleMs: 250 }, cors: { origins: ['https://app.example'] } })
  })

  test('--config names one anywhere, and its bad values are named like any other', async () => {
    const cwd = cwdWith({ 'other.json': '{"environment": "other"}', 'bad.json': '{"port": "eighty"}' })
    expect((await loadConfig({ cwd, env: {}, configPath: 'other.json' })).environment).toBe('other')
    expect((await refusal(cwd, 'bad.json'))?.message).toBe(
      `invalid configuration: port must be a whole number from 0 to 65535 (got "eighty" from ${join(cwd, 'bad.json')})`,
    )
  })

  test.each([
    ['{"port": 8080,}', 'is not valid JSON'],
    ['[1, 2]', 'must hold a JSON object'],
    ['{"prot": 8080}', 'unknown configuration key "prot" in'],
    ['{"prot": 8080}', 'did you mean "port"?'],
    ['{"cors": {"origin": ["*"]}}', 'did you mean "cors.origins"?'],
    ['{"__proto__": {"port": 1}}', 'unknown configuration key "__proto__"'],
  ])('%s is refused: %s', async (text, message) => {
    const err = await refusal(cwdWith({ 'flagd.config.json': text }))
    expect(err).toBeInstanceOf(ConfigError)
    expect(err?.message).toContain(message)
  })

  test('a config file that is a FIFO (or a directory) is refused at once instead of blocking start-up', async () => {
    const cwd = cwdWith({})
    Bun.spawnSync(['mkfifo', join(cwd, 'fifo.json')])
    const fifo = await refusal(cwd, 'fifo.json')
    expect(fifo).toBeInstanceOf(ConfigError)
    expect(fifo?.message).toContain('is not a regular file (a FIFO, socket or device)')
    mkdirSync(join(cwd, 'dir.json'))
    expect((await refusal(cwd, 'dir.json'))?.message).toContain('is not a regular file (a directory)')
  })

  test('both flagd.config.ts and flagd.config.json in one directory: refused, naming both', async () => {
    const cwd = cwdWith({ 'flagd.config.ts': 'export default {}\n', 'flagd.config.json': '{}' })
    const err = await refusal(cwd)
    expect(err).toBeInstanceOf(ConfigError)
    expect(err?.message).toBe(`both flagd.config.ts and flagd.config.json are in ${cwd}: keep one, or name the one to use with --config`)
    expect((await loadConfig({ cwd, env: {}, configPath: 'flagd.config.json' })).environment).toBe('development')
  })
})
