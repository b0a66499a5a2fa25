/**
 * What the server keeps on a rollout holds across every path that writes a flag row
 * (docs/guarded-rollouts.md#status-and-percent): a write that sends the rollout as it is keeps its
 * `writtenAt` and its trip, so a PUT re-sending a tripped flag does not restart it; a different
 * rollout starts afresh. Reads show `status` and `percent`, never `writtenAt` or `halted`. The
 * paths are checked against the services' source, as the protection test does.
 */

import { afterEach, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FlagRow } from '../../src/domain/flag-row.ts'
import type { Caller, Principal } from '../../src/domain/principal.ts'
import type { Rollout } from '../../src/domain/rollout.ts'
import { haltRollout } from '../../src/services/rollout-halt.ts'
import type { Services } from '../../src/services/services.ts'
import { createTestApp, SYSTEM, type TestApp } from '../helpers/test-app.ts'

const START = Date.parse('2026-12-01T09:00:00.000Z')
let now = START
let apps: TestApp[] = []
afterEach(async () => {
  for (const a of apps) await a.close()
  apps = []
})

const ROLLOUT = {
  variant: 'true',
  start: new Date(START).toISOString(),
  end: new Date(START + 100_000).toISOString(),
  fromPercent: 0,
  toPercent: 100,
  guard: { checks: [{ kind: 'threshold', metric: 'app.crashes', max: 0, windowSeconds: 60 }] },
}
const user = (id: string, permissions: string[]): Caller => ({
  principal: { kind: 'user', userId: id, username: id, sessionId: `ses_${id}`, permissions, flagPrefixes: [] } as Principal,
  requestId: `req_${id}`,
})
const dev = user('usr_dev', ['flag:read', 'flag:write', 'migration:write'])

/** production (the default) and staging, both with flag `f` under the same rollout, tripped (paused) in production. */
async function world() {
  now = START + 20_000
  const a = await createTestApp({ FLAGD_ENVIRONMENT: 'production' }, { now: () => new Date(now) })
  apps.push(a)
  const s = a.app.services
  await s.environments.put(SYSTEM, 'staging', {})
  await s.flags.create(SYSTEM, { name: 'f', type: 'BOOLEAN', value: false, description: 'd', rollout: ROLLOUT })
  const row = () => a.app.store.committed().flags.get('f') as FlagRow
  const stored = (env = 'production') => row().states[env]?.rollout as Rollout
  now += 10_000
  const evidence = { check: 0, kind: 'threshold' as const, treatment: { increase: 3 }, control: null, difference: null }
  const deps = { store: a.app.store, now: () => new Date(now) }
  expect(
    await haltRollout(deps, { env: 'production', flag: 'f', writtenAt: stored().writtenAt as string, action: 'pause', evidence }),
  ).toBe('halted')
  now += 10_000
  return { a, s, row, stored }
}

/** `f` as production reads it, sent back whole with one field changed. */
const readBack = (s: Services, change: Record<string, unknown>) => ({
  ...JSON.parse(s.flags.read.text(s.flags.get(SYSTEM.principal, 'f')).json),
  ...change,
})

interface KeepPath {
  name: string
  file: string
  write(s: Services): Promise<unknown>
}

const PATHS: KeepPath[] = [
  {
    name: 'PUT of the flag as read, a value changed',
    file: 'flag-service.ts',
    write: (s) => s.flags.update(dev, 'f', readBack(s, { value: true })),
  },
  { name: 'PATCH of a shared field', file: 'flag-service.ts', write: (s) => s.flags.update(dev, 'f', { description: 'new words' }) },
  {
    name: 'PATCH of the rollout as read',
    file: 'flag-service.ts',
    write: (s) => s.flags.update(dev, 'f', { rollout: readBack(s, {}).rollout, value: true }),
  },
  {
    name: 'change request applied',
    file: 'change-request-apply.ts',
    write: async (s) => {
      const made = await s.changeRequests.create(dev, {
        environment: 'production',
        title: 't',
        changes: [{ flag: 'f', set: { value: true } }],
      })
      return s.changeRequests.apply(dev, made.id)
    },
  },
  {
    name: 'scheduled change applied',
    file: 'change-request-apply.ts',
    write: async (s) => {
      const scheduledAt = new Date(now + 5000).toISOString()
      const changes = [{ flag: 'f', set: { value: true, rollout: readBack(s, {}).rollout } }]
      await s.changeRequests.create(dev, { environment: 'production', title: 't', changes, scheduledAt })
      now += 10_000
      return s.changeRequests.applyDue()
    },
  },
  {
    name: 'promotion from staging, which has the same rollout',
    file: 'environment-promotion.ts',
    write: async (s) => {
      await s.flags.update(dev, 'f', { value: true }, undefined, undefined, 'staging')
      return s.environments.promote(dev, 'production', { from: 'staging' })
    },
  },
  {
    name: 'import of our own export, a value changed',
    file: 'migration-apply.ts',
    write: (s) => {
      const doc = JSON.parse(JSON.stringify(s.migrations.exportDocument(SYSTEM.principal, 'production').document))
      doc.flags.f.value = true
      return s.migrations.importDocument(dev, doc, { mode: 'merge', values: 'overwrite', dryRun: false }, 'import-upload')
    },
  },
  {
    name: "import of flagd's format, the export as it is",
    file: 'migration-apply.ts',
    write: async (s) => {
      await s.flags.update(dev, 'f', { description: 'moved' })
      const doc = JSON.parse(s.migrations.exportFlagd(SYSTEM.principal, 'production').text)
      return s.migrations.importDocument(dev, doc, { mode: 'merge', values: 'overwrite', dryRun: false }, 'import-upload')
    },
  },
  {
    name: 'rollback to the revision before the trip',
    file: 'flag-service.ts',
    write: async (s) => {
      await s.flags.update(dev, 'f', { description: 'later' })
      return s.audit.rollback(dev, 'f', 2)
    },
  },
  {
    name: 'a change of a segment its rule uses',
    file: 'segment-service.ts',
    write: async (s) => {
      await s.segments.put(SYSTEM, 'beta', { rule: { in: [{ var: 'plan' }, ['beta']] } })
      await s.flags.update(dev, 'f', { targeting: { if: [{ $ref: 'beta' }, 'true', null] } })
      return s.segments.put(SYSTEM, 'beta', { rule: { in: [{ var: 'plan' }, ['beta', 'gamma']] } })
    },
  },
  {
    name: 'archived, then restored',
    file: 'flag-archive.ts',
    write: async (s) => {
      await s.flags.archive(SYSTEM, 'f')
      return s.flags.restore(SYSTEM, 'f')
    },
  },
  {
    name: 'a new environment made as a copy of production',
    file: 'environment-service.ts',
    write: (s) => s.environments.put(SYSTEM, 'qa', { copyFrom: 'production' }),
  },
]

test('the list covers every service file that writes flag rows', () => {
  const dir = join(import.meta.dir, '../../src/services')
  const writers = readdirSync(dir).filter((file) => /tx\.put\('flags'/.test(readFileSync(join(dir, file), 'utf8')))
  // rollout-halt writes the trip itself (rollout-halt.test.ts)
  const covered = new Set([...PATHS.map((p) => p.file), 'rollout-halt.ts'])
  expect(writers.filter((file) => !covered.has(file))).toEqual([])
})

for (const path of PATHS)
  test(`${path.name}: the rollout sent as it is keeps writtenAt and its trip`, async () => {
    const w = await world()
    const kept = w.stored()
    expect(kept.halted?.status).toBe('paused')
    const revision = w.row().revision
    await w.s.changeRequests // protection is not this test's concern: production is unprotected
    await path.write(w.s)
    expect(w.row().revision).toBeGreaterThanOrEqual(revision)
    expect(w.stored()).toEqual(kept)
    // a copy made as an environment serves what its original served, trip included; staging's
    // own rollout was never tripped
    if (path.name.startsWith('a new environment')) expect(w.stored('qa')).toEqual(kept)
    expect(w.stored('staging').halted).toBeUndefined()
  })

test('a different rollout starts afresh: writtenAt now, no trip; null removes it', async () => {
  const w = await world()
  const before = w.stored()
  await w.s.flags.update(dev, 'f', { rollout: { ...ROLLOUT, toPercent: 50 } })
  expect(w.stored()).toEqual({ ...ROLLOUT, toPercent: 50, writtenAt: new Date(now).toISOString() } as Rollout)
  expect(w.stored().writtenAt).not.toBe(before.writtenAt)
  await w.s.flags.update(dev, 'f', { rollout: null })
  expect(w.stored()).toBeUndefined()
})

test('reads show status and percent, never writtenAt or halted: flag, list, environments view, export', async () => {
  const w = await world()
  const shown = { status: 'paused', percent: 30, fromPercent: 0, toPercent: 100 }
  const one = JSON.parse(w.s.flags.read.text(w.s.flags.get(SYSTEM.principal, 'f')).json).rollout
  const list = JSON.parse(w.s.flags.list(SYSTEM.principal, ''))[0].rollout
  const states = w.s.environments.statesOf(SYSTEM, 'f')
  const exported = w.s.migrations.exportDocument(SYSTEM.principal, 'production').document.flags.f?.rollout
  const file = JSON.parse(w.s.migrations.exportFile(SYSTEM.principal, 'staging').text).flags.f.rollout
  for (const r of [one, list, states.production?.rollout, exported]) {
    expect(r).toMatchObject(shown)
    expect(r).not.toHaveProperty('writtenAt')
    expect(r).not.toHaveProperty('halted')
  }
  // staging runs on: at 40 s of 100, 40 %, and a later read moves with the clock
  expect(states.staging?.rollout).toMatchObject({ status: 'running', percent: 40 })
  expect(file).toMatchObject({ status: 'running', percent: 40 })
  now += 20_000
  expect(JSON.parse(w.s.flags.list(SYSTEM.principal, '', 'staging'))[0].rollout).toMatchObject({ status: 'running', percent: 60 })
  expect(JSON.parse(w.s.migrations.exportFile(SYSTEM.principal, 'staging').text).flags.f.rollout).toMatchObject({ percent: 60 })
  now += 100_000
  expect(w.s.environments.statesOf(SYSTEM, 'f').staging?.rollout).toMatchObject({ status: 'completed', percent: 100 })
})

test('a flag sent back as read, or its export imported as it is, changes nothing: no new revision', async () => {
  const w = await world()
  const revision = w.row().revision
  await w.s.flags.update(dev, 'f', readBack(w.s, {}))
  await w.s.flags.update(dev, 'f', { rollout: readBack(w.s, {}).rollout })
  const doc = w.s.migrations.exportDocument(SYSTEM.principal, 'production').document
  const imported = await w.s.migrations.importDocument(dev, doc, { mode: 'merge', values: 'overwrite', dryRun: false }, 'import-upload')
  expect(imported).toMatchObject({ summary: { updated: 0 } })
  const made = await w.s.changeRequests.create(dev, {
    environment: 'production',
    title: 'same',
    changes: [{ flag: 'f', set: { rollout: readBack(w.s, {}).rollout } }],
  })
  expect(w.s.changeRequests.get(SYSTEM.principal, made.id).changes[0]?.diff).toEqual({})
  expect(w.row().revision).toBe(revision)
})
