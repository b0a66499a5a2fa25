/**
 * The trip of a rollout's guard (docs/guarded-rollouts.md#when-a-guard-trips): one durable commit
 * that stops the rollout, rolled back (its share 0 for good) or paused (held at its share), with
 * the evidence kept on the rollout and in the audit entry. Made once across replicas: the
 * transaction re-reads the flag and changes nothing when the rollout was written again since the
 * guard began counting, or is already stopped.
 */

import type { Clock } from '../domain/clock.ts'
import { type FlagRow, stampServed, withStateIn } from '../domain/flag-row.ts'
import { newId } from '../domain/new-id.ts'
import { ownValue } from '../domain/own-property.ts'
import { systemPrincipal } from '../domain/principal.ts'
import { rolloutAt } from '../domain/rollout.ts'
import type { GuardAction, GuardEvidence, RolloutHalt } from '../domain/rollout-guard.ts'
import type { CommitMeta, Store } from '../storage/store.ts'

/** What `haltRollout` needs: the store, the clock, and where to say it (a `warn` line). */
export interface RolloutHaltDeps {
  store: Store
  now: Clock
  logger?: { warn(fields: object, msg: string): void }
}

/** Which rollout to stop and why: the `writtenAt` the guard counted from, its action and evidence. */
export interface RolloutHaltInput {
  env: string
  flag: string
  writtenAt: string
  action: GuardAction
  evidence: GuardEvidence
}

/**
 * Stops the rollout of `input.flag` in `input.env` (see module comment) as the system actor
 * `guard`: `'halted'` when this call committed the trip, `'unchanged'` when the flag or its rollout
 * is gone, was written again since `writtenAt`, or was already stopped (by another replica, say).
 */
export async function haltRollout(deps: RolloutHaltDeps, input: RolloutHaltInput): Promise<'halted' | 'unchanged'> {
  const { store, now } = deps
  const meta: CommitMeta = {
    principal: systemPrincipal('guard'),
    source: 'guard',
    requestId: newId('guard'),
    environment: input.env,
    guard: input.evidence,
  }
  const { result } = await store.transact(meta, (tx): 'halted' | 'unchanged' => {
    const row = tx.read.flags.get(input.flag)
    const state = row === undefined ? undefined : ownValue(row.states, input.env)
    const rollout = state?.rollout
    if (row === undefined || state === undefined || rollout === undefined) return 'unchanged'
    if ((rollout.writtenAt ?? '') !== input.writtenAt || rollout.halted !== undefined) return 'unchanged'
    const at = now()
    const halted: RolloutHalt = {
      status: input.action === 'pause' ? 'paused' : 'rolled-back',
      at: at.toISOString(),
      // the share served at the trip: a paused rollout keeps exactly the contexts it had
      percent: rolloutAt(rollout, Math.floor(at.getTime() / 1000)).percent,
      ...input.evidence,
    }
    const next: FlagRow = withStateIn(row, input.env, { ...state, rollout: { ...rollout, halted } })
    tx.put('flags', stampServed(row, { ...next, updatedAt: at.toISOString(), revision: row.revision + 1 }))
    return 'halted'
  })
  if (result === 'halted') {
    const { check, kind, difference } = input.evidence
    deps.logger?.warn(
      { flag: input.flag, environment: input.env, check, kind, difference, action: input.action },
      'a rollout guard tripped: the rollout is stopped',
    )
  }
  return result
}
