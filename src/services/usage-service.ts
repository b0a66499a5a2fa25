/**
 * Flag usage (docs/api.md#usage): the counts the evaluation service keeps in memory are added to the
 * usage log at most once a minute and at shutdown (a `kill -9` loses at most that minute); reads
 * add what is stored (every replica's) to what this replica has not written yet, so an answer is
 * never a minute behind. Buckets older than 30 days are pruned. Only flags that exist are counted
 * and reported; a deleted flag's counts are pruned with age.
 */

import { canSeeFlag, requirePermissionSomewhere } from '../domain/access-policy.ts'
import { InvalidError, NotFoundError } from '../domain/errors.ts'
import { isArchived } from '../domain/flag.ts'
import { DEFAULT_LIFETIMES, isPotentiallyStale, type KindLifetimes } from '../domain/flag-lifecycle.ts'
import {
  type FlagUsage,
  flagIdOfKey,
  flagUsageOf,
  hourOf,
  isStale,
  USAGE_RETENTION_DAYS,
  type UsageBucket,
  usageKey,
} from '../domain/flag-usage.ts'
import { parseIsoInstant } from '../domain/iso-instant.ts'
import type { Principal } from '../domain/principal.ts'
import type { UsageLog } from '../storage/shared-tables.ts'
import type { Store } from '../storage/store.ts'
import { requireIn } from './environment-access.ts'
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
  /** The same moment under the name of docs/openfeature.md#in-process-usage: when an in-process provider was last sent it. */
  lastServedInProcessAt: string | null
  /** True while a live sync stream holds it. */
  heldInProcess: boolean
  stale: boolean
  /** Outlived its kind's expected lifetime since it was created (docs/api.md#lifecycle). */
  potentiallyStale: boolean
  /** Archived flags keep their usage (docs/api.md#archive). */
  archived: boolean
}

/** The usage use cases. */
export interface UsageService {
  /** `GET /api/flags/{name}/usage`: since `since` (ISO 8601; 30 days ago when absent), in environment `env` (default: the default one). */
  flagUsage(principal: Principal, name: string, since?: string, env?: string): Promise<FlagUsage>
  /**
   * `GET /api/usage`: every visible flag since `since` (ISO 8601; 30 days ago when absent), in name
   * order, counted in environment `env` (default: the default one), `stale` when unused in every
   * environment (whatever `since` says: docs/api.md#usage).
   */
  list(principal: Principal, env?: string, since?: string): Promise<UsageSummary[]>
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
  /** The default environment (config `environment`): a read naming none shows its usage. */
  environment: string
  staleDays: number
  /** Each kind's expected lifetime, for `potentiallyStale` (docs/api.md#lifecycle; default: the default lifetimes). */
  lifetimes?: KindLifetimes
  now: () => number
  /** A failed write is reported, and its counts kept for the next one. */
  onFlushError?: (err: unknown) => void
  /** When an in-process provider was last served a flag of an environment (`''` the default one, `undefined` any; see `SyncAudience`); absent: never. */
  lastHeldAt?: (env: string | undefined, flagName: string) => number | undefined
  /** True while a live sync stream holds a flag of an environment (see `SyncAudience`); absent: never. */
  heldNow?: (env: string | undefined, flagName: string) => boolean
  /** The counts of each drain, by flag name (for `flagd_evaluations_total`). */
  onCounted?: (rows: { flag: string; variant: string; reason: string; count: number }[]) => void
}

export function createUsageService(deps: UsageDeps): UsageService {
  const { store, log, counter } = deps
  const now = deps.now
  // counts drained but not yet written (a failed write keeps them for the next)
  let unwritten: UsageBucket[] = []
  // writes and reads take turns: a read never sees counts that left memory but are not stored yet
  // settled with nothing: the last read's counts are not kept until the next turn
  // (docs/performance.md#memory-that-goes-back)
  let turn: Promise<void> = Promise.resolve()
  const settled = () => {}
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    const run = turn.then(work)
    turn = run.then(settled, settled)
    return run
  }

  // when a stream last held the flag in `env`, or in any environment when none is given
  const syncedAt = (name: string, env?: string): string | null => {
    const at = deps.lastHeldAt?.(env, name)
    return at === undefined ? null : new Date(at).toISOString()
  }
  // buckets by flag name (flags deleted since are left out)
  const byName = (buckets: readonly UsageBucket[]) => {
    const names = new Map([...store.committed().flags.values()].map((f) => [f.id, f.name]))
    return buckets.flatMap((b) => {
      const flag = names.get(flagIdOfKey(b.flagId))
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

  /** The environment a read counts in, checked (`404` unknown, `403` unreadable); `undefined`: the default one. */
  const environmentKey = (principal: Principal, env: string | undefined): string | undefined => {
    requirePermissionSomewhere(principal, 'flag:read')
    const snapshot = store.committed()
    if (env !== undefined && !snapshot.environments.has(env)) throw new NotFoundError(`no environment named ${JSON.stringify(env)}`)
    requireIn(principal, 'flag:read', env ?? deps.environment)
    return env === undefined || env === deps.environment ? undefined : env
  }

  /** `since` as epoch ms (30 days ago when absent); `400` naming the field when it is no real instant. */
  const sinceOf = (since: string | undefined): number => {
    if (since === undefined) return now() - USAGE_RETENTION_DAYS * DAY_MS
    const parsed = parseIsoInstant(since)
    if (parsed === undefined)
      throw new InvalidError('since must be an ISO 8601 date or date-time (2026-11-01T00:00:00Z)', 'since', 'must be an ISO 8601 date-time')
    return parsed
  }

  return {
    pendingCounts: () => byName(counter.peek()),

    async flagUsage(principal, name, since, env) {
      const key = environmentKey(principal, env)
      const flag = canSeeFlag(principal, name) ? store.committed().flags.get(name) : undefined
      if (!flag) throw new NotFoundError(`no flag named ${JSON.stringify(name)}`)
      const buckets = await bucketsSince(sinceOf(since), [usageKey(flag.id, key)])
      return flagUsageOf(flag.name, buckets, syncedAt(flag.name, key ?? ''), deps.heldNow?.(key ?? '', flag.name) ?? false)
    },

    async list(principal, env, since) {
      const key = environmentKey(principal, env)
      const at = now()
      const sinceMs = sinceOf(since)
      const counted = hourOf(sinceMs)
      // every kept day is read: `stale` does not depend on `since`
      const buckets = await bucketsSince(Math.min(at - USAGE_RETENTION_DAYS * DAY_MS, sinceMs))
      // counts of the environment asked about; the last use in any environment decides `stale`
      const byFlag = new Map<string, { total: number; last: string | null }>()
      const lastAnywhere = new Map<string, string>()
      for (const b of buckets) {
        const id = flagIdOfKey(b.flagId)
        if (!(lastAnywhere.get(id) !== undefined && (lastAnywhere.get(id) as string) >= b.lastAt)) lastAnywhere.set(id, b.lastAt)
        if (b.flagId !== usageKey(id, key) || b.hour < counted) continue
        const known = byFlag.get(id) ?? { total: 0, last: null }
        known.total += b.count
        if (known.last === null || b.lastAt > known.last) known.last = b.lastAt
        byFlag.set(id, known)
      }
      return [...store.committed().flags.values()]
        .filter((f) => canSeeFlag(principal, f.name))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .map((f) => {
          const used = byFlag.get(f.id)
          const lastEvaluatedAt = used?.last ?? null
          const lastSyncedAt = syncedAt(f.name, key ?? '')
          return {
            name: f.name,
            total: used?.total ?? 0,
            lastEvaluatedAt,
            lastSyncedAt,
            lastServedInProcessAt: lastSyncedAt,
            heldInProcess: deps.heldNow?.(key ?? '', f.name) ?? false,
            // served in-process in any environment counts as used, as an evaluation anywhere does
            stale: isStale(lastAnywhere.get(f.id) ?? null, f.updatedAt, at, deps.staleDays, syncedAt(f.name)),
            potentiallyStale: isPotentiallyStale(f, deps.lifetimes ?? DEFAULT_LIFETIMES, at),
            archived: isArchived(f),
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
