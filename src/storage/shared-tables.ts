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
