/**
 * Flag usage (docs/api.md#usage): how often each flag was evaluated, with which variant, per hour (UTC),
 * and which flags are stale (neither evaluated nor changed for `usage.staleDays`). Counts are kept in
 * hourly buckets for {@link USAGE_RETENTION_DAYS} days; a bucket is one flag, hour, variant and reason.
 */

import { ownValue, setOwn } from './own-property.ts'

/** How long hourly buckets are kept. */
export const USAGE_RETENTION_DAYS = 30

const HOUR_MS = 3_600_000

/**
 * The key usage is counted under (docs/environments.md#usage): the flag's id for the default
 * environment (so counts from before environments existed stay the default one's), `id@env` for
 * another. Flag ids never hold `@`, so the key parts back unambiguously.
 */
export function usageKey(flagId: string, env: string | undefined): string {
  return env === undefined ? flagId : `${flagId}@${env}`
}

/** The flag id of a usage key. */
export function flagIdOfKey(key: string): string {
  const at = key.indexOf('@')
  return at < 0 ? key : key.slice(0, at)
}

/** One hourly bucket: `count` evaluations of flag `flagId` answering `variant` for `reason`; `lastAt` the newest. */
export interface UsageBucket {
  /** The usage key: the flag id, with `@env` for an environment other than the default one (see `usageKey`). */
  flagId: string
  /** The start of the hour, ISO 8601 UTC (`2026-11-25T05:00:00.000Z`). */
  hour: string
  /** The variant answered; `''` when none was (a disabled flag, an error, a bulk `304`). */
  variant: string
  reason: string
  count: number
  lastAt: string
}

/** The start of the hour holding `ms`, as ISO text. */
export function hourOf(ms: number): string {
  return new Date(Math.floor(ms / HOUR_MS) * HOUR_MS).toISOString()
}

/** A flag's usage as `GET /api/flags/{name}/usage` answers it. */
export interface FlagUsage {
  name: string
  total: number
  lastEvaluatedAt: string | null
  variants: Record<string, number>
  hours: { at: string; count: number }[]
  /** When an in-process provider last held the flag over a live sync stream (now while one does), or null. */
  lastSyncedAt: string | null
  /** The same moment under the name of docs/openfeature.md#in-process-usage: when an in-process provider was last sent it. */
  lastServedInProcessAt: string | null
  /** True while a live sync stream holds the flag (a provider that left holds nothing at once). */
  heldInProcess: boolean
}

/** The usage of flag `name` from its buckets (any order, any replica): totals, variants, hours in order. */
export function flagUsageOf(
  name: string,
  buckets: readonly UsageBucket[],
  lastSyncedAt: string | null = null,
  heldInProcess = false,
): FlagUsage {
  let total = 0
  let lastEvaluatedAt: string | null = null
  const variants: Record<string, number> = {}
  const hours = new Map<string, number>()
  for (const b of buckets) {
    total += b.count
    if (lastEvaluatedAt === null || b.lastAt > lastEvaluatedAt) lastEvaluatedAt = b.lastAt
    if (b.variant !== '') setOwn(variants, b.variant, (ownValue(variants, b.variant) ?? 0) + b.count)
    hours.set(b.hour, (hours.get(b.hour) ?? 0) + b.count)
  }
  const ordered = [...hours].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([at, count]) => ({ at, count }))
  return { name, total, lastEvaluatedAt, variants, hours: ordered, lastSyncedAt, lastServedInProcessAt: lastSyncedAt, heldInProcess }
}

/**
 * True when a flag is stale: not evaluated within `staleDays` (never, or last before the limit) and
 * not changed within them either (a flag made or changed lately is not stale yet).
 */
export function isStale(
  lastEvaluatedAt: string | null,
  updatedAt: string,
  nowMs: number,
  staleDays: number,
  lastSyncedAt: string | null = null,
): boolean {
  const limit = nowMs - staleDays * 86_400_000
  const evaluatedLately = lastEvaluatedAt !== null && Date.parse(lastEvaluatedAt) >= limit
  // held by an in-process provider within the window: used, though its evaluations are not counted
  const syncedLately = lastSyncedAt !== null && Date.parse(lastSyncedAt) >= limit
  return !evaluatedLately && !syncedLately && Date.parse(updatedAt) < limit
}
