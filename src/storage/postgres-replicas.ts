/**
 * Which replicas are alive and how far each has applied the change feed (`flagd_replicas`), so that
 * a revocation is complete before it is answered: a logout, a revoked token, a deleted user or a
 * changed password on one replica is refused on every other from the next request (docs/api.md#api-tokens,
 * docs/operations.md#replicas), not a few milliseconds later. Each replica reports its applied revision after every change
 * it applies and with every poll (its heartbeat); a replica silent for 5 s no longer counts.
 */

import type { SQL } from 'bun'
import { newId } from '../domain/new-id.ts'
import type { Change } from './store.ts'

/** True for a change that takes access away: a session, token or user changed or deleted (not created). */
export function revokes(change: Change): boolean {
  return change.before !== null && (change.table === 'sessions' || change.table === 'tokens' || change.table === 'users')
}

export class ReplicaRegistry {
  readonly id = newId('rep')
  private reported = 0
  private reporting: Promise<void> | undefined
  private wanted = 0

  constructor(private readonly sql: SQL) {}

  /** Records that this replica has applied `revision` (coalesced; failures are left to the poll). */
  report(revision: number): void {
    this.wanted = Math.max(this.wanted, revision)
    if (this.reporting || this.wanted <= this.reported) return
    this.reporting = (async () => {
      while (this.wanted > this.reported) {
        const revision = this.wanted
        await this.heartbeat(revision).catch(() => {})
        this.reported = revision
      }
    })().finally(() => (this.reporting = undefined))
  }

  /** Says this replica is alive at `revision`. */
  async heartbeat(revision: number): Promise<void> {
    await this.sql`INSERT INTO flagd_replicas (id, revision, seen_at) VALUES (${this.id}, ${revision}, now())
      ON CONFLICT (id) DO UPDATE SET revision = GREATEST(flagd_replicas.revision, EXCLUDED.revision), seen_at = now()`
  }

  /** Waits until every other live replica has applied `revision`, at most `maxMs`. */
  async awaitOthers(revision: number, maxMs = 1000): Promise<void> {
    const deadline = performance.now() + maxMs
    for (;;) {
      const [row] = await this.sql`SELECT count(*) AS behind FROM flagd_replicas
        WHERE id <> ${this.id} AND seen_at > now() - interval '5 seconds' AND revision < ${revision}`
      if (Number(row.behind) === 0 || performance.now() > deadline) return
      await Bun.sleep(2)
    }
  }

  /** Leaves the registry (a stopping replica). */
  async leave(): Promise<void> {
    await this.sql`DELETE FROM flagd_replicas WHERE id = ${this.id}`
  }
}
