/**
 * Two small things the storage backends keep besides the state, for services that need them to be
 * shared by every replica: the failed-login ledger and the webhook delivery cursors. Their shapes
 * are storage's to define (it offers them; the file and PostgreSQL backends implement them).
 */

/**
 * Failures shared by replicas (contract §18): every replica records its failures here and reads the
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
