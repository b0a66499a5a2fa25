/**
 * Usage from in-process evaluations (docs/openfeature.md#in-process-usage): the evaluation counts an
 * application's OpenTelemetry SDK reports are added to flag usage, in the reporting token's
 * environment, per variant and reason. A delta point counts as it is; a cumulative one by its
 * increase since the same series last reported (a series seen for the first time, or restarted,
 * counts from zero), so a point sent twice is never counted twice. Flags the caller cannot see are
 * ignored; one point adds at most a billion.
 */

import { canSeeFlag, requirePermissionSomewhere } from '../domain/access-policy.ts'
import { environmentOf, type Principal } from '../domain/principal.ts'
import type { Store } from '../storage/store.ts'
import { requireIn } from './environment-access.ts'
import { flagsIn, homeOf } from './environment-views.ts'
import type { UsageCounter } from './usage-counter.ts'

/** One data point of an evaluation counter, as the transport decoded it. */
export interface ReportedPoint {
  /** Resource, scope and point attributes: a cumulative counter is followed per series. */
  series: string
  flag: string
  variant: string
  reason: string
  value: number
  cumulative: boolean
  /** When a cumulative series (re)started: a new start is a restart, counted from 0. */
  start: string
}

const CAP = 1_000_000_000
const MAX_SERIES = 100_000

/** The use case. */
export interface InProcessUsage {
  /** Adds the points `principal` reports; answers how many were counted. */
  ingest(principal: Principal, points: readonly ReportedPoint[]): number
}

export function createInProcessUsage(store: Store, counter: UsageCounter | undefined): InProcessUsage {
  // the last value of each cumulative series, by reporter and series (insertion order: oldest first)
  const seen = new Map<string, { start: string; value: number }>()
  const reporterOf = (p: Principal) => (p.kind === 'token' ? p.tokenId : p.kind === 'user' ? p.userId : p.name)
  return {
    ingest(principal, points) {
      requirePermissionSomewhere(principal, 'flag:evaluate')
      const snapshot = store.committed()
      const env = environmentOf(principal)
      requireIn(principal, 'flag:evaluate', snapshot, env) // flag:read grants it too
      const flags = flagsIn(snapshot, env ?? homeOf(snapshot) ?? '')
      let counted = 0
      for (const point of points) {
        let increase = point.value
        if (point.cumulative) {
          const key = `${reporterOf(principal)}\u0000${point.series}`
          const before = seen.get(key)
          increase = before && before.start === point.start && point.value >= before.value ? point.value - before.value : point.value
          seen.delete(key)
          seen.set(key, { start: point.start, value: point.value })
          if (seen.size > MAX_SERIES) seen.delete(seen.keys().next().value as string)
        }
        const flag = canSeeFlag(principal, point.flag) ? flags.get(point.flag) : undefined
        if (!flag || increase <= 0 || !counter) continue
        counter.countMany(flag, point.variant, point.reason, Math.min(CAP, Math.round(increase)))
        counted++
      }
      return counted
    },
  }
}
