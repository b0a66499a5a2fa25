/**
 * `AuditLog` over the file store's journal: filters run over the in-memory index, newest first (or
 * oldest first after an id, for stream catch-up), and only the entries returned are read from disk.
 */

import type { AuditEntry } from '../domain/audit-entry.ts'
import type { AuditJournal, IndexItem } from './audit-journal.ts'
import type { AuditLog, AuditQuery } from './store.ts'

/** True when `item` passes every filter of `q`. */
function matches(item: IndexItem, q: AuditQuery, flagIds: ReadonlySet<string> | undefined, floorMs: number): boolean {
  if (item.atMs < floorMs) return false
  if (flagIds && (item.flagId === undefined || !flagIds.has(item.flagId))) return false
  if (q.name !== undefined && !(item.action.startsWith('flag.') && item.names.includes(q.name))) return false
  if (q.actorId !== undefined && item.actorId !== q.actorId) return false
  if (q.environment !== undefined && item.environment !== q.environment) return false
  if (q.actionPrefix !== undefined) {
    const prefixes = typeof q.actionPrefix === 'string' ? [q.actionPrefix] : q.actionPrefix
    if (!prefixes.some((p) => item.action.startsWith(p))) return false
  }
  if (q.sinceMs !== undefined && item.atMs < q.sinceMs) return false
  if (q.untilMs !== undefined && item.atMs > q.untilMs) return false
  return true
}

/** The first index whose id is greater than `id`. */
function after(items: readonly IndexItem[], id: number): number {
  let lo = 0
  let hi = items.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((items[mid] as IndexItem).id <= id) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The audit log over `journal`, hiding entries older than `retentionMs` (0: keep all). */
export function fileAuditLog(journal: AuditJournal, retentionMs: () => number, now: () => number): AuditLog {
  const floor = () => (retentionMs() > 0 ? now() - retentionMs() : Number.NEGATIVE_INFINITY)
  return {
    async query(q) {
      const items = journal.items
      const flagIds = q.flagIds ? new Set(q.flagIds) : undefined
      const floorMs = floor()
      const picked: IndexItem[] = []
      // the index knows each entry's size: a page stops before it would pass maxBytes (never empty)
      let bytes = 0
      let truncated = false
      const take = (item: IndexItem): boolean => {
        if (q.maxBytes !== undefined && picked.length > 0 && bytes + item.length > q.maxBytes) {
          truncated = true
          return false
        }
        bytes += item.length
        picked.push(item)
        return true
      }
      if (q.afterId !== undefined) {
        for (let i = after(items, q.afterId); i < items.length && picked.length < q.limit; i++) {
          const item = items[i] as IndexItem
          if (matches(item, q, flagIds, floorMs) && !take(item)) break
        }
      } else {
        const start = q.beforeId === undefined ? items.length : after(items, q.beforeId - 1)
        for (let i = start - 1; i >= 0 && picked.length < q.limit; i--) {
          const item = items[i] as IndexItem
          if (matches(item, q, flagIds, floorMs) && !take(item)) break
        }
      }
      return Object.assign(await journal.read(picked), { truncated })
    },

    async flagRevision(flagId, revision) {
      const floorMs = floor()
      for (let i = journal.items.length - 1; i >= 0; i--) {
        const item = journal.items[i] as IndexItem
        if (item.flagId === flagId && item.revision === revision && item.action !== 'flag.deleted' && item.atMs >= floorMs)
          return (await journal.read([item]))[0] as AuditEntry
      }
      return undefined
    },

    prune: async (cutoffMs) => journal.prune(cutoffMs),
  }
}
