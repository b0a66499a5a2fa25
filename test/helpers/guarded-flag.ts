/**
 * A flag with a guarded rollout, written through the store (docs/guarded-rollouts.md): tests of the
 * metrics keeping set guards up this way, whatever the HTTP validation of `rollout.guard` accepts.
 */

import type { FlagRow } from '../../src/domain/flag-row.ts'
import { systemPrincipal } from '../../src/domain/principal.ts'
import type { Rollout } from '../../src/domain/rollout.ts'
import type { Guard } from '../../src/domain/rollout-guard.ts'
import type { Store } from '../../src/storage/store.ts'

/** A guard reading an error counter, a request counter and a latency histogram. */
export const SAMPLE_GUARD: Guard = {
  checks: [
    { kind: 'error-rate', errors: 'app.errors', total: 'app.requests' },
    { kind: 'mean', histogram: 'app.latency' },
    { kind: 'threshold', metric: 'app.errors', max: 100, windowSeconds: 60 },
  ],
}

/** Sets `rollout` (with `guard`, written at `writtenAt`) on flag `name` in `env`. */
export async function setGuardedRollout(
  store: Store,
  name: string,
  env: string,
  over: { guard?: Guard; writtenAt?: string; variant?: string; start?: string } = {},
): Promise<void> {
  const meta = { principal: systemPrincipal('cli'), source: 'cli' as const, requestId: 'guard-test', environment: env }
  const rollout: Rollout = {
    variant: over.variant ?? 'true',
    start: over.start ?? '2026-12-01T00:00:00Z',
    end: '2026-12-31T00:00:00Z',
    fromPercent: 10,
    toPercent: 100,
    guard: over.guard ?? SAMPLE_GUARD,
    ...(over.writtenAt !== undefined ? { writtenAt: over.writtenAt } : {}),
  }
  // the store stamps a rollout written over a state with the store's time; one written where the
  // environment had no state keeps the writtenAt it comes with (a copy of a stored one): so a test
  // that says when its rollout was written takes the state away first
  const held = (store.committed().flags.get(name) as FlagRow).states[env]
  if (over.writtenAt !== undefined)
    await store.transact(meta, (tx) => {
      const row = tx.read.flags.get(name) as FlagRow
      const { [env]: _dropped, ...others } = row.states
      tx.put('flags', { ...row, revision: row.revision + 1, states: others } as FlagRow)
    })
  await store.transact(meta, (tx) => {
    const row = tx.read.flags.get(name) as FlagRow
    const state = row.states[env] ?? held ?? { valueExists: false }
    tx.put('flags', { ...row, revision: row.revision + 1, states: { ...row.states, [env]: { ...state, rollout } } } as FlagRow)
  })
}
