/**
 * Flag usage (docs/api.md#usage): the counts the evaluation service keeps in memory are added to the
 * usage log at most once a minute and at shutdown (a `kill -9` loses at most that minute); reads
 * add what is stored (every replica's) to what this replica has not written yet, so an answer is
 * never a minute behind. Buckets older than 30 days are pruned. Only flags that exist are counted
 * and reported; a deleted flag's counts are pruned with age.
 */

import { canSeeFlag, requirePermission } from '../domain/access-policy.ts'
import { InvalidError, NotFoundError } from '../domain/errors.ts'
import { type FlagUsage, flagUsageOf, hourOf, isStale, USAGE_RETENTION_DAYS, type UsageBucket } from '../domain/flag-usage.ts'
import { parseIsoInstant } from '../domain/iso-instant.ts'
import type { Principal } from '../domain/principal.ts'
import type { UsageLog } from '../storage/shared-tables.ts'
import type { Store } from '../storage/store.ts'
import type { UsageCounter } from './usage-counter.ts'

/** How often counts are written. */
export const USAGE_FLUSH_MS = 60_000
const DAY_MS = 86_400_000

/** One flag in `GET /api/usage`. */
export interface UsageSummary {
  name: string
  total: number
  lastEvaluatedAt: string | null
  /** When an in-process provider last held it (now while one does), or null. */
  lastSyncedAt: string | null
  stale: boolean
}

/** The usage use cases. */
export interface UsageService {
  /** `GET /api/flags/{name}/usage`: since `since` (ISO 8601; 30 days ago when absent). */
  flagUsage(principal: Principal, name: string, since?: string): Promise<FlagUsage>
  /** `GET /api/usage`: every visible flag over the last 30 days, in name order, with `stale`. */
  list(principal: Principal): Promise<UsageSummary[]>
  /** Writes the counts kept in memory (the timer does it once a minute; shutdown once more). */
  flush(): Promise<void>
  /** The counts not yet handed to `onCounted`, by flag name (a metrics scrape adds them). */
  pendingCounts(): { flag: string; variant: string; reason: string; count: number }[]
  /** Stops the timer and writes what is left. */
  stop(): Promise<void>
}

/** What the service needs. */
export interface UsageDeps {
  store: Store
  log: UsageLog
  counter: UsageCounter
  staleDays: number
  now?: () => number
  /** A failed write is reported, and its counts kept for the next one. */
  onFlushError?: (err: unknown) => void
  /** When an in-process provider last held a flag (see `SyncAudience`); absent: never. */
  lastHeldAt?: (flagName: string) => number | undefined
  /** The counts of each drain, by flag name (for `flagd_evaluations_total`). */
  onCounted?: (rows: { flag: string; variant: string; reason: string; count: number }[]) => void
}

export function createUsageService(deps: UsageDeps): UsageService {
  const { store, log, counter } = deps
  const now = deps.now ?? Date.now
  // counts drained but not yet written (a failed write keeps them for the next)
  let unwritten: UsageBucket[] = []
  // writes and reads take turns: a read never sees counts that left memory but are not stored yet
  let turn: Promise<unknown> = Promise.resolve()
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    const run = turn.then(work)
    turn = run.catch(() => {})
    return run
  }

  const syncedAt = (name: string): string | null => {
    const at = deps.lastHeldAt?.(name)
    return at === undefined ? null : new Date(at).toISOString()
  }
  // buckets by flag name (flags deleted since are left out)
  const byName = (buckets: readonly UsageBucket[]) => {
    const names = new Map([...store.committed().flags.values()].map((f) => [f.id, f.name]))
    return buckets.flatMap((b) => {
      const flag = names.get(b.flagId)
      return flag === undefined ? [] : [{ flag, variant: b.variant, reason: b.reason, count: b.count }]
    })
  }
  const flush = (): Promise<void> =>
    inTurn(async () => {
      // drained and handed over in one turn: a scrape sees each count once, pending or handed over
      const drained = counter.drain()
      if (deps.onCounted && drained.length > 0) deps.onCounted(byName(drained))
      const batch = unwritten.concat(drained)
      unwritten = []
      try {
        await log.add(batch)
      } catch (err) {
        unwritten = batch
        deps.onFlushError?.(err)
      }
    })
  let lastPrune = 0
  const timer = setInterval(() => {
    void flush().then(async () => {
      if (now() - lastPrune < DAY_MS / 24) return
      lastPrune = now()
      await log.prune(hourOf(now() - USAGE_RETENTION_DAYS * DAY_MS)).catch(() => {})
    })
  }, USAGE_FLUSH_MS)
  timer.unref?.()

  /** Stored buckets since `sinceMs` and those not written yet, of `flagIds` or all. */
  const bucketsSince = (sinceMs: number, flagIds?: readonly string[]): Promise<UsageBucket[]> =>
    inTurn(async () => {
      const since = hourOf(sinceMs)
      const stored = await log.read(since, flagIds)
      const wanted = flagIds && new Set(flagIds)
      const pending = unwritten.concat(counter.peek()).filter((b) => b.hour >= since && (!wanted || wanted.has(b.flagId)))
      return stored.concat(pending)
    })

  return {
    pendingCounts: () => byName(counter.peek()),

    async flagUsage(principal, name, since) {
      requirePermission(principal, 'flag:read')
      const flag = canSeeFlag(principal, name) ? store.committed().flags.get(name) : undefined
      if (!flag) throw new NotFoundError(`no flag named ${JSON.stringify(name)}`)
      let sinceMs = now() - USAGE_RETENTION_DAYS * DAY_MS
      if (since !== undefined) {
        const parsed = parseIsoInstant(since)
        if (parsed === undefined)
          throw new InvalidError(
            'since must be an ISO 8601 date or date-time (2026-11-01T00:00:00Z)',
            'since',
            'must be an ISO 8601 date-time',
          )
        sinceMs = parsed
      }
      return flagUsageOf(flag.name, await bucketsSince(sinceMs, [flag.id]), syncedAt(flag.name))
    },

    async list(principal) {
      requirePermission(principal, 'flag:read')
      const at = now()
      const buckets = await bucketsSince(at - USAGE_RETENTION_DAYS * DAY_MS)
      const byFlag = new Map<string, { total: number; last: string | null }>()
      for (const b of buckets) {
        const known = byFlag.get(b.flagId) ?? { total: 0, last: null }
        known.total += b.count
        if (known.last === null || b.lastAt > known.last) known.last = b.lastAt
        byFlag.set(b.flagId, known)
      }
      return [...store.committed().flags.values()]
        .filter((f) => canSeeFlag(principal, f.name))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .map((f) => {
          const used = byFlag.get(f.id)
          const lastEvaluatedAt = used?.last ?? null
          const lastSyncedAt = syncedAt(f.name)
          return {
            name: f.name,
            total: used?.total ?? 0,
            lastEvaluatedAt,
            lastSyncedAt,
            stale: isStale(lastEvaluatedAt, f.updatedAt, at, deps.staleDays, lastSyncedAt),
          }
        })
    },

    flush,

    async stop() {
      clearInterval(timer)
      await flush()
      counter.stop()
    },
  }
}
