/**
 * Where a rollout stands, as reads show it (docs/guarded-rollouts.md#status-and-percent): its
 * `status` and the share it serves now (`percent`), both worked out at the moment of the read and
 * never stored. The fields the server keeps (`writtenAt`, `halted`) stay out of what is shown.
 */

import { type Rollout, rolloutAt } from './rollout.ts'

/** A rollout's status: before its window, in it, after it, or stopped by its guard. */
export type RolloutStatus = 'pending' | 'running' | 'completed' | 'paused' | 'rolled-back'

/** A rollout as a read shows it: the written fields with `status` and `percent`. */
export type RolloutRead = Omit<Rollout, 'writtenAt' | 'halted'> & { status: RolloutStatus; percent: number }

/**
 * The status of `r` and the share it serves at `nowMs`: 0 once rolled back, the share of the trip
 * once paused, otherwise the share of the step the time has reached (what OFREP serves that second).
 */
export function rolloutStatus(r: Rollout, nowMs: number): { status: RolloutStatus; percent: number } {
  if (r.halted !== undefined) return { status: r.halted.status, percent: r.halted.status === 'rolled-back' ? 0 : r.halted.percent }
  const { percent } = rolloutAt(r, Math.floor(nowMs / 1000))
  const status = nowMs < Date.parse(r.start) ? 'pending' : nowMs >= Date.parse(r.end) ? 'completed' : 'running'
  return { status, percent }
}

/** The written fields of `r` (what a write compares and a read shows), without what the server keeps. */
export function writtenRollout(r: Rollout): Omit<Rollout, 'writtenAt' | 'halted'> {
  const { writtenAt: _writtenAt, halted: _halted, ...written } = r
  return written
}

/** `r` as a read shows it at `nowMs`: its written fields, `status` and `percent`. */
export function rolloutRead(r: Rollout, nowMs: number): RolloutRead {
  return { ...writtenRollout(r), ...rolloutStatus(r, nowMs) }
}
