/**
 * What the server keeps on a rollout across writes (docs/guarded-rollouts.md#status-and-percent):
 * `writtenAt`, when the rollout was last written (a guard counts from there), and `halted`, its
 * guard's trip. The store runs `keptRollouts` on every flag row a transaction writes, whatever path
 * wrote it, so none can forget it: a rollout written as it was keeps both, a different one starts
 * afresh. `haltOnly` tells the one write the guard itself may make.
 */

import { type FlagState, STATE_FIELDS } from './environment.ts'
import type { FlagRow } from './flag-row.ts'
import { ownValue, setOwn } from './own-property.ts'
import type { Rollout } from './rollout.ts'
import { GUARD_DEFAULTS } from './rollout-guard.ts'
import { writtenRollout } from './rollout-status.ts'
import { sameJson } from './same-json.ts'

/** `r`'s written fields with its guard's defaults spelt out: a guard sent with them says what one without does. */
function comparable(r: Rollout): unknown {
  const written = writtenRollout(r)
  if (written.guard === undefined) return written
  const checks = written.guard.checks.map((c) => (c.kind === 'threshold' ? c : { maxIncrease: 0, ...c }))
  return { ...written, guard: { ...GUARD_DEFAULTS, ...written.guard, checks } }
}

/**
 * Whether `a` and `b` are the same rollout in their written fields (variant, window, shares, `by`,
 * guard, its defaults spelt out or not: docs/guarded-rollouts.md#status-and-percent).
 */
export function sameWrittenRollout(a: Rollout | undefined, b: Rollout | undefined): boolean {
  if (a === undefined || b === undefined) return a === b
  return sameJson(comparable(a), comparable(b))
}

/**
 * `after` (the row a write puts, `before` the one it replaces) with each environment's rollout
 * settled: the stored one, `writtenAt` and `halted` included, where the written fields are the same
 * (a flag sent back as it was read restarts nothing); otherwise the written fields with `writtenAt`
 * `at` and no trip. An environment new to the row that arrives with a kept rollout (a new
 * environment, or a default named anew, made as a copy of another) keeps it as it is: a copy
 * serves what its original served. Answers `after` itself when nothing needed settling.
 */
export function keptRollouts(before: FlagRow | null, after: FlagRow, at: string): FlagRow {
  let states: Record<string, FlagState> | undefined
  for (const [env, state] of Object.entries(after.states)) {
    const rollout = state.rollout
    if (rollout === undefined) continue
    const held = before === null ? undefined : ownValue(before.states, env)
    // requests never carry writtenAt (validation drops it): only a copy of a stored rollout does
    if (held === undefined && rollout.writtenAt !== undefined) continue
    const stored = held?.rollout
    const kept = stored !== undefined && sameWrittenRollout(stored, rollout) ? stored : { ...writtenRollout(rollout), writtenAt: at }
    if (kept === rollout || JSON.stringify(kept) === JSON.stringify(rollout)) continue
    states ??= { ...after.states }
    setOwn(states, env, { ...state, rollout: kept })
  }
  return states === undefined ? after : { ...after, states }
}

/**
 * `definition` with its rollout as written, without what the server keeps: what a write compares
 * with the rollout it is sent, so one sent back as it was read changes nothing.
 */
export function asWritten<T extends { rollout?: Rollout }>(definition: T): T {
  const r = definition.rollout
  if (r === undefined || (r.writtenAt === undefined && r.halted === undefined)) return definition
  return { ...definition, rollout: writtenRollout(r) }
}

/** The fields a write may move besides what it means: the row's revision and the time it changed. */
const STAMP = ['revision', 'updatedAt', 'servedRevisions'] as const

/**
 * Whether `after` differs from `before` only by a trip recorded on one environment's rollout
 * (`halted` added where there was none, its written fields and `writtenAt` the same): the one change
 * a guard makes, in a protected environment too (docs/guarded-rollouts.md#when-a-guard-trips).
 */
export function haltOnly(before: FlagRow | null, after: FlagRow | null): boolean {
  if (before === null || after === null) return false
  const halted = Object.keys(after.states).filter((env) => {
    const was = ownValue(before.states, env)?.rollout
    const is = ownValue(after.states, env)?.rollout
    return was !== undefined && is?.halted !== undefined && was.halted === undefined
  })
  if (halted.length !== 1) return false
  const env = halted[0] as string
  const was = ownValue(before.states, env) as FlagState
  const is = ownValue(after.states, env) as FlagState
  const { halted: _halted, ...rest } = is.rollout as Rollout
  if (!sameJson(rest, was.rollout)) return false
  for (const field of STATE_FIELDS) if (field !== 'rollout' && !sameJson(was[field], is[field])) return false
  const states: Record<string, FlagState> = { ...after.states }
  setOwn(states, env, was)
  const bare = (row: FlagRow) => {
    const out: Record<string, unknown> = { ...row }
    for (const field of STAMP) delete out[field]
    return out
  }
  return sameJson(bare({ ...after, states }), bare(before))
}
