/**
 * The daemon's periodic cleaning, run at start and then every minute, on the replica that leads
 * (always, with the file store): expired sessions are deleted, and audit entries past the retention
 * are pruned. Failures are logged and tried again at the next round.
 */

import type { Clock } from '../domain/clock.ts'
import type { Leadership } from '../storage/postgres-shared.ts'
import type { Store } from '../storage/store.ts'
import type { AuthService } from './auth-service.ts'

const EVERY_MS = 60_000

/** What housekeeping needs. */
export interface HousekeepingDeps {
  /** The process's clock: what "past retention" means (docs/development.md#time). */
  now: Clock
  auth: AuthService
  store: Store
  leadership: Leadership
  /** Audit entries older than this many days are pruned (0: kept for ever). */
  auditRetentionDays: number
  log: { info(fields: object, msg: string): void; warn(fields: object, msg: string): void }
}

/** Starts housekeeping; the answer stops it. */
export function startHousekeeping(deps: HousekeepingDeps): () => void {
  const { auth, store, leadership, auditRetentionDays, log } = deps
  const round = () => {
    if (!leadership.leading) return
    void auth.pruneExpired().catch((err) => log.warn({ err }, 'pruning expired sessions failed'))
    if (auditRetentionDays <= 0) return
    void store.audit
      .prune(deps.now().getTime() - auditRetentionDays * 86_400_000)
      .then((n) => {
        if (n > 0) log.info({ entries: n, retentionDays: auditRetentionDays }, 'audit log: pruned entries past retention')
      })
      .catch((err) => log.warn({ err }, 'pruning the audit log failed'))
  }
  round()
  const timer = setInterval(round, EVERY_MS)
  timer.unref()
  return () => clearInterval(timer)
}
