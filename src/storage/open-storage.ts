/**
 * Opens the storage the configuration names (docs/operations.md#replicas): the JSON file in the data directory (the
 * default), or the PostgreSQL database shared by replicas. Either way the caller gets a store, the
 * token-signing secret and the leadership for once-only work; nothing else differs.
 */

import type { Config } from '../config.ts'
import type { Clock } from '../domain/clock.ts'
import type { DiskFaults } from './change-journal.ts'
import { fileGuardLog } from './file-guard-log.ts'
import { fileUsageLog } from './file-usage-log.ts'
import { openJsonFileStore } from './json-file-store.ts'
import { sharedGuardLog } from './postgres-guard-log.ts'
import {
  advisoryLeadership,
  type Leadership,
  sharedCursors,
  sharedFailures,
  sharedSecret,
  sharedUsage,
  soleLeader,
} from './postgres-shared.ts'
import { openPostgresStore } from './postgres-store.ts'
import { loadOrCreateSecret } from './secret-file.ts'
import { repairShadowedSegments } from './shadowed-segments.ts'
import type { CursorStore, FailureLedger, GuardLog, UsageLog } from './shared-tables.ts'
import type { Store } from './store.ts'
import { fileCursors } from './webhook-cursor-file.ts'

/** An open storage. */
export interface Storage {
  store: Store
  /** The secret session tokens are signed with: configured, else kept by the storage. */
  secret(): Promise<string>
  /** Whether this process runs the once-only work; call `stop()` before closing the store. */
  leadership(): Leadership
  /** Where webhook delivery cursors live. */
  webhookCursors: CursorStore
  /** Failed logins shared by replicas; absent with one process (the throttle keeps them in memory). */
  failureLedger?: FailureLedger
  /** Flag usage counts (docs/api.md#usage). */
  usage: UsageLog
  /** The application metrics guards read (docs/guarded-rollouts.md#the-applications-metrics). */
  guard: GuardLog
}

/** How opening reports. */
export interface StorageHooks {
  /** The process's clock (docs/development.md#time). */
  now: Clock
  /** What an operator should act on (an upgraded file, a lost database). */
  log(line: string): void
  /** What is good to know (the database is back, leadership moved). */
  info?: (line: string) => void
  onWrite?: (seconds: number, transactions: number) => void
  onFailure?: (error: unknown) => void
  /** Tests simulate a full disk (file store only). */
  faults?: DiskFaults
}

/** Opens the configured storage. */
export async function openStorage(config: Config, hooks: StorageHooks): Promise<Storage> {
  const auditRetentionMs = config.audit.retentionDays * 86_400_000
  if (config.storage.backend === 'postgres') {
    const store = await openPostgresStore({
      url: config.storage.postgresUrl as string,
      dataDir: config.dataDir,
      now: hooks.now,
      auditRetentionMs,
      environment: config.environment,
      log: hooks.log,
      ...(hooks.info ? { info: hooks.info } : {}),
      ...(hooks.onWrite ? { onWrite: hooks.onWrite } : {}),
    })
    await repairShadowedSegments(store, hooks.log)
    return {
      store,
      secret: async () => config.auth.secret ?? (await sharedSecret(store.sql)),
      leadership: () => advisoryLeadership(store.sql, 2000, hooks.info ?? hooks.log),
      webhookCursors: sharedCursors(store.sql),
      failureLedger: sharedFailures(store.sql),
      usage: sharedUsage(store.sql),
      guard: sharedGuardLog(store.sql),
    }
  }
  const store = await openJsonFileStore({
    dataDir: config.dataDir,
    now: hooks.now,
    auditRetentionMs,
    environment: config.environment,
    log: hooks.log,
    ...(hooks.onWrite ? { onWrite: hooks.onWrite } : {}),
    ...(hooks.onFailure ? { onFailure: hooks.onFailure } : {}),
    ...(hooks.faults ? { faults: hooks.faults } : {}),
  })
  await repairShadowedSegments(store, hooks.log)
  return {
    store,
    secret: async () => config.auth.secret ?? (await loadOrCreateSecret(config.dataDir)),
    leadership: () => soleLeader,
    webhookCursors: fileCursors(config.dataDir),
    usage: fileUsageLog(config.dataDir),
    guard: fileGuardLog(config.dataDir),
  }
}
