/** docs/operations.md#the-public-export: a warning at start when the open export undoes confinement. */

import { afterEach, expect, test } from 'bun:test'
import type { HeldPermission } from '../../src/domain/permission.ts'
import { type ConfinementState, publicExportExposure } from '../../src/services/public-export-exposure.ts'
import { capturedLogger } from '../helpers/captured-logger.ts'
import { createTestApp, SYSTEM, type TestApp, tempDir } from '../helpers/test-app.ts'

type Row = { permissions: HeldPermission[]; flagPrefixes: string[]; environment?: string | null }
const user = (permissions: string[], flagPrefixes: string[] = []): Row => ({ permissions: permissions as HeldPermission[], flagPrefixes })
const token = (permissions: string[], flagPrefixes: string[] = [], environment: string | null = null): Row => ({
  ...user(permissions, flagPrefixes),
  environment,
})
const state = (users: Row[], tokens: Row[] = []): ConfinementState => ({
  users: new Map(users.map((u, i) => [`u${i}`, u])),
  tokens: new Map(tokens.map((t, i) => [`t${i}`, t])),
})
const ON = { publicExport: true, singleSignOn: false }

test('nothing to say while nobody is confined, or when the public export is off', () => {
  expect(publicExportExposure(state([user(['flag:read', 'flag:write'])], [token(['flag:evaluate'])]), ON)).toBeUndefined()
  expect(publicExportExposure(state([user(['flag:read'], ['team-a/'])]), { ...ON, publicExport: false })).toBeUndefined()
})

test('a confined user or token, or single sign-on, is named in the warning', () => {
  for (const [s, sso, what] of [
    [state([user(['flag:read'], ['team-a/'])]), false, '1 user'],
    [state([user(['flag:read@staging'])]), false, '1 user'],
    [state([], [token(['flag:evaluate'], [], 'production'), token(['flag:evaluate'], ['app/'])]), false, '2 API tokens'],
    [state([]), true, 'single sign-on'],
  ] as const) {
    const warning = publicExportExposure(s, { publicExport: true, singleSignOn: sso })
    expect(warning).toContain('GET /migration/export')
    expect(warning).toContain(what)
    expect(warning).toContain('publicExport: false')
  }
})

let apps: TestApp[] = []
afterEach(async () => {
  for (const a of apps) await a.close()
  apps = []
})

test('the daemon logs it at warn when it starts with a confined user and the public export on', async () => {
  const dataDir = tempDir()
  const first = await createTestApp({}, { dataDir, ownsDataDir: false })
  await first.app.services.users.create(SYSTEM, {
    username: 'team-a',
    password: 'team-a-password',
    permissions: ['flag:read'],
    flagPrefixes: ['team-a/'],
  })
  await first.close()
  const { logger, lines } = capturedLogger()
  const loud = await createTestApp({}, { dataDir, ownsDataDir: false, logger })
  const warning = lines.find((l) => String(l.msg).includes('GET /migration/export'))
  await loud.close()
  expect(warning?.level).toBe(40)
  const quiet = capturedLogger()
  apps.push(await createTestApp({ FLAGD_PUBLIC_EXPORT: 'false' }, { dataDir, ownsDataDir: true, logger: quiet.logger }))
  expect(quiet.lines.some((l) => String(l.msg).includes('GET /migration/export'))).toBe(false)
})
