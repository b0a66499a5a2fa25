/**
 * Last-use times of sessions and API tokens (docs/api.md#authentication, docs/api.md#api-tokens): a use is not a change, so stores keep
 * the times in memory and write them with their next write, never turning a read into a write.
 * Shared by both stores: which times are newer than the rows say, and which are not yet written.
 */

import type { Rows, UsageTable } from './store.ts'

/** One time to write. */
export interface Use {
  tbl: UsageTable
  id: string
  at: string
}

export class UsageTimes {
  private readonly times: Record<UsageTable, Map<string, string>> = { sessions: new Map(), tokens: new Map() }
  private readonly unsaved = new Map<string, Use>()

  /** Records a use; answers false when an equal or newer time was already known. */
  touch(table: UsageTable, id: string, at: string): boolean {
    const known = this.times[table].get(id)
    if (known !== undefined && known >= at) return false
    this.times[table].set(id, at)
    this.unsaved.set(`${table}/${id}`, { tbl: table, id, at })
    return true
  }

  /** The newest known time of `id`, if any was touched. */
  get(table: UsageTable, id: string): string | undefined {
    return this.times[table].get(id)
  }

  /** A row's last use: the newest of its stored `lastUsedAt` and the touched time. */
  lastUsed<T extends UsageTable>(table: T, row: Rows[T]): Rows[T]['lastUsedAt'] {
    const touched = this.times[table].get(row.id)
    return touched !== undefined && (row.lastUsedAt === null || touched > row.lastUsedAt) ? touched : row.lastUsedAt
  }

  /** The times not yet written. */
  pending(): Use[] {
    return [...this.unsaved.values()]
  }

  /** Marks `uses` written, unless a newer time came meanwhile. */
  saved(uses: readonly Use[]): void {
    for (const u of uses) if (this.unsaved.get(`${u.tbl}/${u.id}`)?.at === u.at) this.unsaved.delete(`${u.tbl}/${u.id}`)
  }

  /** Forgets rows that no longer exist. */
  forgetMissing(exists: (table: UsageTable, id: string) => boolean): void {
    for (const table of ['sessions', 'tokens'] as const) {
      for (const id of [...this.times[table].keys()]) {
        if (exists(table, id)) continue
        this.times[table].delete(id)
        this.unsaved.delete(`${table}/${id}`)
      }
    }
  }
}
