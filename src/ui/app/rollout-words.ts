/**
 * A progressive rollout in words (docs/ui.md#change-control): where it stands now, for a flag's
 * page, and what it is, for the history ("rollout of "true" from 5 % on … to 100 % on …").
 */

import { type Rollout, rolloutAt } from '../../domain/rollout.ts'
import { localTime } from './local-time.ts'

/** A rollout as a read shows it: with its status and percent (docs/guarded-rollouts.md#status-and-percent). */
export type ReadRollout = Rollout & { status?: string; percent?: number }

/** A rollout in words: where it stands at `nowMs`, and where it goes; stopped by its guard, where it stays. */
export function rolloutNow(r: ReadRollout, nowMs: number, time: (iso: string) => string = localTime): string {
  const now = rolloutAt(r, Math.floor(nowMs / 1000))
  const variant = JSON.stringify(r.variant)
  if (r.status === 'rolled-back') return `Rolled back by its guard: serves ${variant} to no context (was rising to ${r.toPercent} %)`
  if (r.status === 'paused') return `Paused by its guard: serves ${variant} to ${r.percent ?? now.percent} % of contexts, no more`
  if (nowMs < Date.parse(r.start))
    return `Will serve ${variant} to ${r.fromPercent} % of contexts from ${time(r.start)}, rising to ${r.toPercent} % on ${time(r.end)}`
  if (nowMs >= Date.parse(r.end)) return `Serves ${variant} to ${r.toPercent} % of contexts (its rollout ended ${time(r.end)})`
  return `Serves ${variant} to ${now.percent} % of contexts now, rising to ${r.toPercent} % on ${time(r.end)}`
}

/** A rollout as a change shows it: its variant, shares and window, or "none". */
export function rolloutInWords(r: unknown, time: (iso: string) => string = localTime): string {
  if (r === null || r === undefined) return 'none'
  const x = r as Partial<Rollout>
  if (typeof x.variant !== 'string' || typeof x.start !== 'string' || typeof x.end !== 'string') return JSON.stringify(r)
  const by = x.by ? `, sticky by ${x.by}` : ''
  return `rollout of ${JSON.stringify(x.variant)} from ${x.fromPercent} % on ${time(x.start)} to ${x.toPercent} % on ${time(x.end)}${by}`
}
