/**
 * A guard's trip (docs/guarded-rollouts.md#when-a-guard-trips): `haltRollout` commits once, as the
 * system actor `guard`, in a protected environment without a change request; the rollout reads as
 * rolled back or paused; the rule OFREP, the flagd export and the sync document serve changes, and
 * `@openfeature/flagd-core` on the export agrees with OFREP; the audit entry carries the evidence.
 * On the JSON store, on an injected clock.
 */

import { afterEach, expect, setSystemTime, test } from 'bun:test'
import type { AuditEntry } from '../../src/domain/audit-entry.ts'
import type { FlagState } from '../../src/domain/environment.ts'
import type { FlagRow } from '../../src/domain/flag-row.ts'
import type { Principal } from '../../src/domain/principal.ts'
import type { GuardEvidence } from '../../src/domain/rollout-guard.ts'
import { haltRollout } from '../../src/services/rollout-halt.ts'
import { deliveryBody } from '../../src/services/webhook-dispatcher.ts'
import { capturedLogger } from '../helpers/captured-logger.ts'
import { oracle } from '../helpers/flagd-oracle.ts'
import { createTestApp, SYSTEM, type TestApp } from '../helpers/test-app.ts'

const START = Date.parse('2026-12-01T09:00:00.000Z')
let now = START + 35_000
let apps: TestApp[] = []
afterEach(async () => {
  setSystemTime()
  for (const a of apps) await a.close()
  apps = []
})

const GUARD = { checks: [{ kind: 'error-rate', errors: 'app.errors', total: 'app.requests' }], minSamples: 50 }
const ROLLOUT = {
  variant: 'true',
  start: new Date(START).toISOString(),
  end: new Date(START + 100_000).toISOString(),
  fromPercent: 0,
  toPercent: 100,
  guard: GUARD,
}
const EVIDENCE: GuardEvidence = {
  check: 0,
  kind: 'error-rate',
  treatment: { total: 400, errors: 40, rate: 0.1 },
  control: { total: 400, errors: 4, rate: 0.01 },
  difference: { estimate: 0.09, lower: 0.05, upper: 0.13 },
}

/** production (protected, the default) and staging; flag `f` with a guarded rollout in production. */
async function world(log?: ReturnType<typeof capturedLogger>) {
  now = START + 35_000
  const a = await createTestApp({ FLAGD_ENVIRONMENT: 'production' }, { now: () => new Date(now), ...(log ? { logger: log.logger } : {}) })
  apps.push(a)
  const s = a.app.services
  await s.environments.put(SYSTEM, 'staging', {})
  await s.flags.create(SYSTEM, { name: 'f', type: 'BOOLEAN', value: false, rollout: ROLLOUT })
  await s.environments.put(SYSTEM, 'production', { protected: true, requiredApprovals: 1 })
  const row = () => a.app.store.committed().flags.get('f') as FlagRow
  const rollout = (env = 'production') => row().states[env]?.rollout
  const halt = (action: 'rollback' | 'pause', writtenAt = rollout()?.writtenAt as string) =>
    haltRollout(
      { store: a.app.store, now: () => new Date(now), ...(log ? { logger: log.logger } : {}) },
      { env: 'production', flag: 'f', writtenAt, action, evidence: EVIDENCE },
    )
  return { a, s, row, rollout, halt }
}

const ofrep = (w: Awaited<ReturnType<typeof world>>, key: string) => {
  const answer = JSON.parse(w.s.evaluations.one(SYSTEM.principal, 'f', { targetingKey: key }).text)
  return { value: answer.value, variant: answer.variant }
}
const KEYS = Array.from({ length: 300 }, (_, i) => `user-${i}`)

test('a rollback commits once in a protected environment: status rolled-back, percent 0, the flag answers as without it everywhere', async () => {
  const w = await world()
  const writtenAt = w.rollout()?.writtenAt
  expect(writtenAt).toBe(new Date(START + 35_000).toISOString())
  const before = w.row().revision
  expect(KEYS.some((k) => ofrep(w, k).value === true)).toBe(true)
  expect(await w.halt('rollback')).toBe('halted')
  expect(w.row().revision).toBe(before + 1)
  expect(w.rollout()?.halted).toMatchObject({ status: 'rolled-back', percent: 35, at: new Date(now).toISOString(), ...EVIDENCE })
  // once: a second trip, or one counted from another write, changes nothing
  expect(await w.halt('rollback')).toBe('unchanged')
  expect(await w.halt('pause', '2026-01-01T00:00:00.000Z')).toBe('unchanged')
  expect(w.row().revision).toBe(before + 1)
  // every transport: OFREP, the flagd export, the sync document
  for (const k of KEYS) expect(ofrep(w, k)).toEqual({ value: false, variant: 'value' })
  const exported = JSON.parse(w.s.migrations.exportFlagd(SYSTEM.principal).text)
  expect(JSON.stringify(exported.flags.f)).not.toContain('fractional')
  setSystemTime(new Date(now))
  for (const k of KEYS) expect(oracle(exported, 'f', { targetingKey: k })).toMatchObject({ value: false, variant: 'value' })
  const token: Principal = {
    kind: 'token',
    tokenId: 't',
    name: 't',
    permissions: ['flag:evaluate'],
    flagPrefixes: [],
    environment: 'production',
  }
  expect(JSON.parse(w.s.sync.documentFor({ kind: 'token', principal: token })).flags.f).toEqual(exported.flags.f)
  // the read: rolled back, 0 %, fromPercent and toPercent as written, nothing the server keeps
  const read = w.s.flags.get(SYSTEM.principal, 'f')
  const shown = JSON.parse(w.s.flags.read.text(read).json).rollout
  expect(shown).toMatchObject({ status: 'rolled-back', percent: 0, fromPercent: 0, toPercent: 100, guard: GUARD })
  expect(shown).not.toHaveProperty('halted')
  expect(shown).not.toHaveProperty('writtenAt')
  // staging, where the rollout was not halted, still runs it
  now += 10_000
  expect(JSON.parse(w.s.flags.read.text(w.s.flags.get(SYSTEM.principal, 'f', 'staging')).json).rollout).toMatchObject({
    status: 'running',
    percent: 45,
  })
})

test('a pause keeps exactly the contexts that had the variant at the trip, and flagd-core on the export agrees with OFREP', async () => {
  const w = await world()
  const had = KEYS.filter((k) => ofrep(w, k).value === true)
  expect(had.length).toBeGreaterThan(50)
  expect(await w.halt('pause')).toBe('halted')
  for (const later of [START + 60_000, START + 200_000]) {
    now = later
    setSystemTime(new Date(now))
    const exported = JSON.parse(w.s.migrations.exportFlagd(SYSTEM.principal).text)
    const served = KEYS.filter((k) => ofrep(w, k).value === true)
    expect(served).toEqual(had)
    for (const k of KEYS) {
      const core = oracle(exported, 'f', { targetingKey: k })
      expect({ value: core.value, variant: core.variant }, k).toEqual(ofrep(w, k))
    }
    const shown = JSON.parse(w.s.flags.read.text(w.s.flags.get(SYSTEM.principal, 'f')).json).rollout
    expect(shown).toMatchObject({ status: 'paused', percent: 35 })
  }
})

test('the trip is audited as flag.updated by the system actor guard with the evidence, and logged at warn', async () => {
  const log = capturedLogger()
  const w = await world(log)
  await w.halt('rollback')
  const { entries } = await w.s.audit.list(SYSTEM.principal, { limit: 5 })
  const entry = entries[0]
  expect(entry).toMatchObject({
    action: 'flag.updated',
    source: 'guard',
    actor: { type: 'system', id: 'guard', name: 'guard' },
    environment: 'production',
    guard: EVIDENCE,
    target: { type: 'flag', name: 'f' },
  })
  expect(entry).not.toHaveProperty('bypass')
  expect(entry?.before?.rollout).toMatchObject({ status: 'running', percent: 35 })
  expect(entry?.after?.rollout).toMatchObject({ status: 'rolled-back', percent: 0 })
  // webhooks carry it as any change, with the evidence
  expect(JSON.parse(deliveryBody(entry as AuditEntry, 'production'))).toMatchObject({
    type: 'flag.updated',
    source: 'guard',
    guard: EVIDENCE,
  })
  const line = log.lines.find((l) => l.level === 40 && l.flag === 'f')
  expect(line).toMatchObject({ flag: 'f', environment: 'production', check: 0, kind: 'error-rate', difference: EVIDENCE.difference })
})

test('a write with the source guard that changes anything but the trip is refused, protected or not', async () => {
  const w = await world()
  const row = w.row()
  const guard = { principal: { kind: 'system', name: 'guard' } as Principal, source: 'guard' as const, requestId: 'g' }
  const halted = { status: 'paused' as const, at: new Date(now).toISOString(), percent: 35, ...EVIDENCE }
  const tripped = (env: string) => ({ ...row.states[env], rollout: { ...row.states[env]?.rollout, halted } }) as FlagState
  const attempts: FlagRow[] = [
    // the trip and a value
    { ...row, states: { ...row.states, production: { ...tripped('production'), value: true } } as FlagRow['states'] },
    // the trip in two environments
    { ...row, states: { production: tripped('production'), staging: tripped('staging') } as FlagRow['states'] },
    // the rollout's shares
    { ...row, states: { ...row.states, staging: { ...row.states.staging, rollout: { ...ROLLOUT, toPercent: 50 } } } as FlagRow['states'] },
    // a shared field
    { ...row, description: 'changed', states: { ...row.states, production: tripped('production') } as FlagRow['states'] },
  ]
  for (const next of attempts) {
    const refused = await w.a.app.store.transact(guard, (tx) => tx.put('flags', next)).catch((err) => err)
    expect(refused).toMatchObject({ code: 'FORBIDDEN' })
  }
  expect(w.row()).toEqual(row)
})

test('the trace of an evaluation: no rollout step once rolled back; paused, where its guard held it', async () => {
  const w = await world()
  const trace = () => w.s.evaluations.explain(SYSTEM.principal, 'f', { targetingKey: 'user-1' }).trace ?? []
  expect(trace()[0]).toMatchObject({ kind: 'rollout', percent: 35 })
  await w.halt('pause')
  now += 30_000
  expect(trace()[0]).toEqual({ kind: 'rollout', variant: 'true', percent: 35, step: 35, steps: 100, paused: true })
  const other = await world()
  await other.halt('rollback')
  expect(other.s.evaluations.explain(SYSTEM.principal, 'f', { targetingKey: 'user-1' }).trace ?? []).not.toContainEqual(
    expect.objectContaining({ kind: 'rollout' }),
  )
})
