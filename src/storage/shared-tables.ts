/**
 * What the storage backends keep besides the state, for services that need it to be shared by every
 * replica: the failed-login ledger, the webhook delivery cursors and the flag usage counts. Their
 * shapes are storage's to define (it offers them; the file and PostgreSQL backends implement them).
 */

import type { UsageBucket } from '../domain/flag-usage.ts'

/**
 * Failures shared by replicas (docs/operations.md#replicas): every replica records its failures here and reads the
 * others' before deciding, so the limits hold for the service, not per process. Keys are plain text.
 */
export interface FailureLedger {
  /** Failure times (ms) of each key after `sinceMs`, oldest first. */
  recent(keys: readonly string[], sinceMs: number): Promise<Map<string, number[]>>
  record(keys: readonly string[], atMs: number): Promise<void>
  /** Forgets `keys` and every key starting with one of `prefixes`. */
  clear(keys: readonly string[], prefixes: readonly string[]): Promise<void>
}

/** Each webhook's last delivered change id, kept across restarts (and shared by replicas). */
export interface CursorStore {
  load(): Promise<Record<string, number>>
  save(cursors: Readonly<Record<string, number>>): Promise<void>
}

/**
 * Flag usage counts (docs/api.md#usage) in hourly buckets: each replica adds its own counts (written at
 * most once a minute, so a crash loses at most that minute and never corrupts what was written);
 * reads add up every replica's.
 */
export interface UsageLog {
  /** Adds `buckets` to the stored counts, all or none. */
  add(buckets: readonly UsageBucket[]): Promise<void>
  /** The buckets from `sinceHour` on (summed over replicas), of `flagIds` or of every flag. */
  read(sinceHour: string, flagIds?: readonly string[]): Promise<UsageBucket[]>
  /** Forgets buckets older than `beforeHour`. */
  prune(beforeHour: string): Promise<void>
  close(): void
}

/**
 * One stored amount of an application metric a guard reads (docs/guarded-rollouts.md#the-applications-metrics):
 * in one 10-second step, for one environment, flag, metric and variant, one slot of what was
 * counted: a Sum's increase (slot {@link SUM_SLOT}), a Histogram's count ({@link COUNT_SLOT}), sum
 * ({@link HISTOGRAM_SUM_SLOT}) or the count of its bucket `slot` (0 and up). Amounts of the same
 * key add up, whichever replica wrote them.
 */
export interface GuardAmount {
  env: string
  flag: string
  metric: string
  variant: string
  /** The start of the step (ms since the epoch). */
  atMs: number
  slot: number
  value: number
}

/** The slot of a Sum's increase. */
export const SUM_SLOT = -1
/** The slot of a Histogram's count. */
export const COUNT_SLOT = -2
/** The slot of a Histogram's sum. */
export const HISTOGRAM_SUM_SLOT = -3

/** The explicit bounds a histogram metric of a flag is kept with, from the moment (`fromMs`) its rollout was written. */
export interface GuardBounds {
  env: string
  flag: string
  metric: string
  fromMs: number
  bounds: number[]
}

/**
 * The guard log: the application metrics guards read, kept 7 days, written by each replica at least
 * every 10 s (all or none per write); reads add up every replica's amounts.
 */
export interface GuardLog {
  /** Adds `amounts` and records `bounds` (a newer `fromMs` replaces older bounds; an equal one keeps the first). */
  add(amounts: readonly GuardAmount[], bounds: readonly GuardBounds[]): Promise<void>
  /** Per variant and slot, the amounts of steps from `sinceMs` on (and, with `stepMs`, per step of that length). */
  read(
    env: string,
    flag: string,
    metric: string,
    sinceMs: number,
    slots: readonly number[] | 'all',
    stepMs?: number,
  ): Promise<{ variant: string; slot: number; atMs: number; value: number }[]>
  /** The bounds recorded for a histogram metric of a flag. */
  bounds(env: string, flag: string, metric: string): Promise<GuardBounds | undefined>
  /** Forgets steps before `beforeMs`. */
  prune(beforeMs: number): Promise<void>
  /** True when other replicas write to the same log (their amounts are read back every 10 s). */
  readonly shared: boolean
  close(): void
}
