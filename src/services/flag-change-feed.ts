/**
 * The feed of committed flag changes that the event streams (contract §14) are made of. It listens
 * to the store's commits, which arrive only once durable and in commit order, so a stream never
 * tells of a change that a failed write later undoes. Each change keeps the store's `seq` as its id:
 * durable, increasing and never reused, the same number the audit log gives its entries, so a client
 * resuming with `Last-Event-ID` can be given exactly what it missed. Recent changes are kept in
 * memory for that catch-up.
 */

import { actorOf, type Actor } from '../domain/principal.ts'
import type { Flag } from '../domain/flag.ts'
import type { Commit, Store } from '../storage/store.ts'

/** One committed change to one flag. */
export interface FlagChange {
  /** The store's change sequence number (the audit entry id). */
  id: number
  type: 'flag.created' | 'flag.updated' | 'flag.deleted'
  /** The flag's name after the change (before it, for a deletion). */
  name: string
  /** The name before a rename. */
  previousName?: string
  revision: number
  actor: Actor
  /** When the change became durable. */
  at: string
}

/** A batch of changes, as one commit made them. */
export interface FlagChangeBatch {
  changes: readonly FlagChange[]
  /** The flags' revision after them. */
  revision: number
}

/** The feed. */
export interface FlagChangeFeed {
  subscribe(listener: (batch: FlagChangeBatch) => void): () => void
  /** The changes after `id`, oldest first, or `undefined` when the feed no longer reaches back that far. */
  since(id: number): FlagChange[] | undefined
  /** Stops listening to the store. */
  close(): void
}

/** How many recent changes are kept for catch-up. */
export const FEED_CAPACITY = 10_000

/** The flag changes of one commit. */
export function flagChangesOf(commit: Commit): FlagChange[] {
  const actor = actorOf(commit.meta.principal)
  const out: FlagChange[] = []
  for (const change of commit.changes) {
    if (change.table !== 'flags') continue
    const before = change.before as Flag | null
    const after = change.after as Flag | null
    const base = { id: change.seq, actor, at: commit.at }
    if (before && after) {
      out.push({ ...base, type: 'flag.updated', name: after.name, revision: after.revision, ...(before.name !== after.name ? { previousName: before.name } : {}) })
    } else if (after) out.push({ ...base, type: 'flag.created', name: after.name, revision: after.revision })
    else if (before) out.push({ ...base, type: 'flag.deleted', name: before.name, revision: before.revision })
  }
  return out
}

/** Starts the feed over `store`, remembering the last `capacity` changes. */
export function createFlagChangeFeed(store: Store, capacity = FEED_CAPACITY): FlagChangeFeed {
  const recent: FlagChange[] = []
  // the feed reaches back to changes after this id; before any change, to the store's start
  let floor = store.committed().revision
  const listeners = new Set<(batch: FlagChangeBatch) => void>()
  const unsubscribe = store.onCommit((commit) => {
    const changes = flagChangesOf(commit)
    if (changes.length === 0) return
    recent.push(...changes)
    if (recent.length > capacity) floor = (recent.splice(0, recent.length - capacity).at(-1) as FlagChange).id
    const batch = { changes, revision: store.committed().revisionOf('flags') }
    for (const listener of listeners) listener(batch)
  })
  return {
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    since(id) {
      if (id < floor) return undefined
      let lo = 0
      let hi = recent.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if ((recent[mid] as FlagChange).id <= id) lo = mid + 1
        else hi = mid
      }
      return recent.slice(lo)
    },
    close: unsubscribe,
  }
}
