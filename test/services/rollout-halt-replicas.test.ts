/**
 * A guard's trip on replicas of one PostgreSQL database (docs/guarded-rollouts.md#when-a-guard-trips):
 * both replicas see the report that crosses the check and halt at once; exactly one commits, once
 * audited, and both then serve the stopped rollout.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import type { Rollout } from '../../src/domain/rollout.ts'
import type { GuardEvidence } from '../../src/domain/rollout-guard.ts'
import { haltRollout } from '../../src/services/rollout-halt.ts'
import type { Store } from '../../src/storage/store.ts'
import { eventually } from '../helpers/eventually.ts'
import { type Replica, replicaSuite } from '../helpers/postgres-replicas.ts'
import { START } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

setDefaultTimeout(60_000)
let at = START
const now = () => new Date(at)
const pg = replicaSuite(now)
const bin = pg.bin

const EVIDENCE: GuardEvidence = {
  check: 0,
  kind: 'mean',
  treatment: { count: 500, mean: 0.31 },
  control: { count: 500, mean: 0.12 },
  difference: { estimate: 0.19, lower: 0.1, upper: 0.28 },
}

test.skipIf(!bin)('two replicas halting the same rollout at once: one commit, one audit entry, both serve it stopped', async () => {
  const [a, b] = (await pg.replicas(2, { migrated: true })) as [Replica, Replica]
  await a.s.environments.ensureDefault(SYSTEM)
  const rollout = {
    variant: 'true',
    start: new Date(at).toISOString(),
    end: new Date(at + 100_000).toISOString(),
    fromPercent: 0,
    toPercent: 100,
    guard: { checks: [{ kind: 'mean', histogram: 'http.server.request.duration' }] },
  }
  await a.s.flags.create(SYSTEM, { name: 'f', type: 'BOOLEAN', value: false, rollout })
  const stored = (store: Store) => store.committed().flags.get('f')?.states.development?.rollout as Rollout | undefined
  await eventually(() => stored(b.store) !== undefined, { wakeOn: (wake) => b.store.onCommit(wake) })
  const writtenAt = stored(a.store)?.writtenAt as string
  expect(writtenAt).toBe(new Date(at).toISOString())
  at += 40_000
  const input = { env: 'development', flag: 'f', writtenAt, action: 'rollback' as const, evidence: EVIDENCE }
  const outcomes = await Promise.all([haltRollout({ store: a.store, now }, input), haltRollout({ store: b.store, now }, input)])
  expect(outcomes.sort()).toEqual(['halted', 'unchanged'])
  await eventually(() => stored(a.store)?.halted !== undefined && stored(b.store)?.halted !== undefined, {
    wakeOn: (wake) => b.store.onCommit(wake),
  })
  for (const side of [a, b]) {
    expect(stored(side.store)?.halted).toMatchObject({ status: 'rolled-back', percent: 40, ...EVIDENCE })
    const answer = JSON.parse(side.s.evaluations.one(SYSTEM.principal, 'f', { targetingKey: 'user-1' }).text)
    expect(answer).toMatchObject({ value: false, reason: 'STATIC' })
  }
  const entries = (await b.s.audit.list(SYSTEM.principal, { limit: 100 })).entries.filter((e) => e.source === 'guard')
  expect(entries).toHaveLength(1)
  expect(entries[0]).toMatchObject({ action: 'flag.updated', actor: { type: 'system', id: 'guard' }, guard: EVIDENCE })
})
