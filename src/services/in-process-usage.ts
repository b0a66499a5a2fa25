/**
 * Usage from in-process evaluations (docs/openfeature.md#in-process-usage): the evaluation counts an
 * application's OpenTelemetry SDK reports are added to flag usage, in the reporting token's
 * environment, per variant and reason. A delta point counts as it is; a cumulative one by its
 * increase since the same series last reported (a series seen for the first time, or restarted,
 * counts from zero), so a point sent twice is never counted twice.
 *
 * Nothing a request names is kept unless it is a flag the caller sees, one of that flag's own
 * variants and one of OpenFeature's reasons: anything else is ignored before it is stored. The
 * series remembered are digests (never the attributes themselves), in a table bounded in bytes;
 * one point adds at most {@link POINT_CAP}.
 */

import { canSeeFlag, requirePermissionSomewhere } from '../domain/access-policy.ts'
import { answerVariant } from '../domain/answer-variant.ts'
import { allVariants, type Flag } from '../domain/flag.ts'
import { environmentOf, type Principal } from '../domain/principal.ts'
import type { Store } from '../storage/store.ts'
import { requireIn } from './environment-access.ts'
import { createServedSnapshots, type ServedSnapshot, type ServedSnapshots } from './served-snapshot.ts'
import type { UsageCounter } from './usage-counter.ts'

/** One data point of an evaluation counter, as the transport decoded it. */
export interface ReportedPoint {
  /** A digest of the resource, scope and point attributes: a cumulative counter is followed per series. */
  series: string
  flag: string
  variant: string
  reason: string
  value: number
  cumulative: boolean
  /** When a cumulative series (re)started: a new start is a restart, counted from 0. */
  start: string
}

/** The most one point adds: a minute of 16,000 evaluations a second (docs/openfeature.md#in-process-usage). */
export const POINT_CAP = 1_000_000
/** The bytes the remembered cumulative series may take, all reporters together. */
export const SERIES_BYTES = 8 * 2 ** 20
/** What one remembered series costs besides its key and start: the map's slot and the entry object. */
const SERIES_OVERHEAD = 96

/** OpenFeature's resolution reasons: a point of any other is ignored. */
export const OPENFEATURE_REASONS: ReadonlySet<string> = new Set([
  'STATIC',
  'DEFAULT',
  'TARGETING_MATCH',
  'SPLIT',
  'CACHED',
  'DISABLED',
  'UNKNOWN',
  'STALE',
  'ERROR',
])

/** The variants an in-process provider can answer for `flag`: those it lists, its built-in ones, and its answer's. */
export function variantNamesOf(flag: Flag): ReadonlySet<string> {
  const answer = answerVariant(flag)?.variant
  return new Set([...Object.keys(allVariants(flag)), ...(answer === undefined ? [] : [answer])])
}

/**
 * True when an in-process provider can answer `variant` for `flag`, by the names the served snapshot
 * made once (a report may name a flag many times).
 */
function isVariantOf(served: ServedSnapshot, flag: Flag, variant: string): boolean {
  if (variant === '') return true // an answer without a variant (a disabled flag, no default)
  return served
    .part(
      flag,
      'variant-names',
      () => variantNamesOf(flag),
      () => true,
    )
    .has(variant)
}

/** The use case. */
export interface InProcessUsage {
  /** Adds the points `principal` reports; answers how many were counted. */
  ingest(principal: Principal, points: readonly ReportedPoint[]): number
  /** The cumulative series remembered, and the bytes they are reckoned to take. */
  stored(): { series: number; bytes: number }
}

/** Creates the use case over the store's served snapshots (`snapshots`: shared with evaluation); `environment`: the default one, which a caller not confined to an environment reports for. */
export function createInProcessUsage(
  store: Store,
  counter: UsageCounter | undefined,
  environment: string,
  snapshots: ServedSnapshots = createServedSnapshots(),
): InProcessUsage {
  // the last value of each cumulative series, by reporter and series (insertion order: oldest first)
  const seen = new Map<string, { start: string; value: number }>()
  let bytes = 0
  const costOf = (key: string, start: string) => 2 * (key.length + start.length) + SERIES_OVERHEAD
  const forget = (key: string) => {
    const known = seen.get(key)
    if (known === undefined) return
    seen.delete(key)
    bytes -= costOf(key, known.start)
  }
  const remember = (key: string, start: string, value: number) => {
    forget(key)
    seen.set(key, { start, value })
    bytes += costOf(key, start)
    while (bytes > SERIES_BYTES) forget(seen.keys().next().value as string)
  }
  const reporterOf = (p: Principal) => (p.kind === 'token' ? p.tokenId : p.kind === 'user' ? p.userId : p.name)
  return {
    ingest(principal, points) {
      requirePermissionSomewhere(principal, 'flag:evaluate')
      const snapshot = store.committed()
      const env = environmentOf(principal) ?? environment
      requireIn(principal, 'flag:evaluate', env) // flag:read grants it too
      const served = snapshots.of(snapshot, env)
      const flags = served.flags
      let counted = 0
      for (const point of points) {
        // checked before anything is kept: a point that cannot count leaves no trace
        const flag = canSeeFlag(principal, point.flag) ? flags.get(point.flag) : undefined
        const reason = point.reason === '' ? 'UNKNOWN' : point.reason
        if (!flag || !OPENFEATURE_REASONS.has(reason) || !isVariantOf(served, flag, point.variant)) continue
        if (!Number.isSafeInteger(point.value) || point.value < 0) continue
        let increase = point.value
        if (point.cumulative) {
          const key = `${reporterOf(principal)}\u0000${point.series}`
          const before = seen.get(key)
          if (before && before.start === point.start && point.value >= before.value) increase = point.value - before.value
          remember(key, point.start, point.value)
        }
        if (increase <= 0 || !counter) continue
        counter.countMany(flag, point.variant, reason, Math.min(POINT_CAP, increase))
        counted++
      }
      return counted
    },
    stored: () => ({ series: seen.size, bytes }),
  }
}
