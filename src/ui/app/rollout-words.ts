/**
 * A progressive rollout in words (docs/ui.md#change-control): where it stands now, for a flag's
 * page, and what it is, for the history ("rollout of "true" from 5 % on … to 100 % on …").
 */

import { type Rollout, rolloutAt } from '../../domain/rollout.ts'
import type { Guard } from '../../domain/rollout-guard.ts'
import { localTime } from './local-time.ts'

/** A rollout as a read shows it: with its status and percent (docs/guarded-rollouts.md#status-and-percent). */
export type ReadRollout = Rollout & { status?: string; percent?: number }

/** A share as a person reads it: to a tenth of a percent ("31.6"), whole numbers without a decimal. */
export function tenths(percent: number): string {
  return String(Math.round(percent * 10) / 10)
}

/** A rollout in words: where it stands at `nowMs`, and where it goes; stopped by its guard, where it stays. */
export function rolloutNow(r: ReadRollout, nowMs: number, time: (iso: string) => string = localTime): string {
  const now = { percent: tenths(rolloutAt(r, Math.floor(nowMs / 1000)).percent) }
  const variant = JSON.stringify(r.variant)
  if (r.status === 'rolled-back') return `Rolled back by its guard: serves ${variant} to no context (was rising to ${r.toPercent} %)`
  if (r.status === 'paused')
    return `Paused by its guard: serves ${variant} to ${r.percent === undefined ? now.percent : tenths(r.percent)} % of contexts, no more`
  if (nowMs < Date.parse(r.start))
    return `Will serve ${variant} to ${r.fromPercent} % of contexts from ${time(r.start)}, rising to ${r.toPercent} % on ${time(r.end)}`
  if (nowMs >= Date.parse(r.end)) return `Serves ${variant} to ${r.toPercent} % of contexts (its rollout ended ${time(r.end)})`
  return `Serves ${variant} to ${now.percent} % of contexts now, rising to ${r.toPercent} % on ${time(r.end)}`
}

/** How a rollout stopped by its guard stands (docs/ui.md#guarded-rollouts), or `null` for one that is not stopped. */
export function haltOf(r: Rollout): { status: 'paused' | 'rolled-back'; at?: string; percent: number } | null {
  // a flag read carries the read-only `status` and `percent`; the stored rollout its halt
  const read = r as Rollout & { status?: string; percent?: number }
  const status = read.status === 'paused' || read.status === 'rolled-back' ? read.status : r.halted?.status
  if (!status) return null
  const percent = status === 'rolled-back' ? 0 : (read.percent ?? r.halted?.percent ?? 0)
  return { status, percent, ...(r.halted?.at ? { at: r.halted.at } : {}) }
}

/** A stopped rollout in words: "Rolled back by its guard at …: the rollout serves "true" to no one". */
export function haltInWords(
  variant: string,
  halt: { status: 'paused' | 'rolled-back'; at?: string | undefined; percent: number },
  time: (iso: string) => string = localTime,
): string {
  const when = halt.at ? ` at ${time(halt.at)}` : ''
  const name = JSON.stringify(variant)
  if (halt.status === 'rolled-back') return `Rolled back by its guard${when}: the rollout serves ${name} to no one`
  return `Paused by its guard${when}: serves ${name} to ${halt.percent} % of contexts until the rollout is written again`
}

/** A rollout as a change shows it: its variant, shares and window, or "none". */
export function rolloutInWords(r: unknown, time: (iso: string) => string = localTime): string {
  if (r === null || r === undefined) return 'none'
  const x = r as Partial<Rollout>
  if (typeof x.variant !== 'string' || typeof x.start !== 'string' || typeof x.end !== 'string') return JSON.stringify(r)
  const by = x.by ? `, sticky by ${x.by}` : ''
  const guarded = x.guard?.checks?.length ? `, ${guardInWords(x.guard)}` : ''
  const h = x.halted
  const stopped = h
    ? `, ${h.status === 'paused' ? `paused by its guard at ${time(h.at)} at ${h.percent} %` : `rolled back by its guard at ${time(h.at)}`}`
    : ''
  return `rollout of ${JSON.stringify(x.variant)} from ${x.fromPercent} % on ${time(x.start)} to ${x.toPercent} % on ${time(x.end)}${by}${guarded}${stopped}`
}

/** A guard as a change shows it: "guarded by 1 check (error-rate of app.errors per app.requests) that rolls it back". */
function guardInWords(guard: Guard): string {
  const checks = guard.checks.map((c) =>
    c.kind === 'error-rate' ? `error-rate of ${c.errors} per ${c.total}` : `${c.kind} of ${c.kind === 'mean' ? c.histogram : c.metric}`,
  )
  const one = checks.length === 1
  const verb = guard.action === 'pause' ? (one ? 'pauses it' : 'pause it') : one ? 'rolls it back' : 'roll it back'
  return `guarded by ${checks.length} ${one ? 'check' : 'checks'} (${checks.join(', ')}) that ${verb}`
}
