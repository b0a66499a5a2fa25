/**
 * The feed of committed flag changes that the event streams (docs/openfeature.md#ofrep) are made of. It listens
 * to the store's commits, which arrive only once durable and in commit order, so a stream never
 * tells of a change that a failed write later undoes. Each change keeps the store's `seq` as its id:
 * durable, increasing and never reused, the same number the audit log gives its entries, so a client
 * resuming with `Last-Event-ID` is given exactly what it missed, read back from the audit log (as
 * far as its retention reaches, across restarts).
 */

import type { AuditEntry } from '../domain/audit-entry.ts'
import { sharedOf } from '../domain/environment.ts'
import type { FlagRow } from '../domain/flag-row.ts'
import { ownValue } from '../domain/own-property.ts'
import { type Actor, actorOf } from '../domain/principal.ts'
import type { Segment } from '../domain/segment.ts'
import type { Commit, Store } from '../storage/store.ts'

/** One committed change to one flag (or, for the streams that ask for them, to one segment). */
export interface FlagChange {
  /** The store's change sequence number (the audit entry id). */
  id: number
  type: 'flag.created' | 'flag.updated' | 'flag.deleted' | SegmentChangeType
  /** The flag's name after the change (before it, for a deletion). */
  name: string
  /** The name before a rename. */
  previousName?: string
  revision: number
  actor: Actor
  /** When the change became durable. */
  at: string
  /**
   * The environments whose view of the flag it changed, when the flag has states of other
   * environments; absent: every environment's (docs/environments.md).
   */
  environments?: readonly string[]
}

/** What a segment change is called on the management stream (only when a client asks for them). */
export type SegmentChangeType = 'segment.created' | 'segment.updated' | 'segment.deleted'

/** A batch of changes, as one commit made them. */
export interface FlagChangeBatch {
  /** The flag changes (what OFREP's streams and the management stream are made of). */
  changes: readonly FlagChange[]
  /** The segment changes (for the management streams that ask for them). */
  segments: readonly FlagChange[]
  /** The flags' revision after them. */
  revision: number
}

/** The feed. */
export interface FlagChangeFeed {
  subscribe(listener: (batch: FlagChangeBatch) => void): () => void
  /**
   * The id of the newest change the feed has handed to its listeners (or the store's revision when
   * it started). Read it in the same tick as subscribing a stream: every change up to it is in the
   * audit log, every later one reaches the listeners, so a catch-up up to it loses and repeats nothing.
   */
  readonly delivered: number
  /**
   * One page of the flag changes after `afterId` and up to `upTo`, oldest first, from the audit
   * log: at most `limit` changes and about {@link CATCH_UP_PAGE_BYTES} of stored entries, so a
   * client catching up over a large journal is fed in pieces as it reads (segment changes too with
   * `withSegments`). Empty when none are left.
   */
  page(afterId: number, upTo: number, options?: { limit?: number; withSegments?: boolean }): Promise<FlagChange[]>
  /** Stops listening to the store. */
  close(): void
}

/** Changes read per catch-up page. */
export const CATCH_UP_PAGE = 500

/** Stored bytes read per catch-up page (only each entry's small change is kept). */
const CATCH_UP_PAGE_BYTES = 1024 * 1024

/** What the streams call an archive and a restore: to a client the flag went, then came back (docs/api.md#archive). */
const STREAMED_AS: Readonly<Record<string, FlagChange['type']>> = { 'flag.archived': 'flag.deleted', 'flag.restored': 'flag.created' }

/** Whether an entry records a change of a flag that was archived before and after it. */
const archivedBothSides = (entry: AuditEntry): boolean =>
  (entry.before as { archived?: unknown } | null)?.archived === true && (entry.after as { archived?: unknown } | null)?.archived === true

/** A flag change as the audit log recorded it. */
export function flagChangeOf(entry: AuditEntry): FlagChange {
  const before = entry.before as { name?: string } | null
  const after = entry.after as { name?: string } | null
  const renamed = before !== null && after !== null && before.name !== after.name
  return {
    id: entry.id,
    type: (STREAMED_AS[entry.action] ?? entry.action) as FlagChange['type'],
    name: entry.target.name as string,
    ...(renamed ? { previousName: before.name as string } : {}),
    revision: entry.revision ?? 0,
    actor: entry.actor,
    at: entry.at,
    ...environmentsOf(entry, before, after),
  }
}

/**
 * The environments a recorded update changed, as {@link changedEnvironments} found them live: the
 * one written when only its state moved; every one when shared fields moved (docs/environments.md#audit).
 */
function environmentsOf(entry: AuditEntry, before: object | null, after: object | null): { environments?: string[] } {
  const env = entry.environment
  if (typeof env !== 'string' || before === null || after === null) return {}
  const shared = (f: object) => JSON.stringify(sharedOf(f))
  return shared(before) === shared(after) ? { environments: [env] } : {}
}

/** The segment changes of one commit. */
export function segmentChangesOf(commit: Commit): FlagChange[] {
  const out: FlagChange[] = []
  for (const change of commit.changes) {
    if (change.table !== 'segments') continue
    const row = (change.after ?? change.before) as Segment
    const type = change.before === null ? 'segment.created' : change.after === null ? 'segment.deleted' : 'segment.updated'
    out.push({ id: change.seq, type, name: row.name, revision: row.revision, actor: actorOf(commit.meta.principal), at: commit.at })
  }
  return out
}

/** The environments whose view a change of `before` into `after` changed, or `undefined` for every one (or the only one). */
function changedEnvironments(before: FlagRow, after: FlagRow): string[] | undefined {
  const names = new Set([...Object.keys(before.states), ...Object.keys(after.states)])
  if (names.size <= 1) return undefined
  const shared = (f: FlagRow) => f.name + JSON.stringify(sharedOf(f))
  if (shared(before) !== shared(after)) return [...names]
  const out: string[] = []
  for (const env of names) if (JSON.stringify(ownValue(before.states, env)) !== JSON.stringify(ownValue(after.states, env))) out.push(env)
  // a new revision that moved nothing of the row: a segment it uses changed, which every environment sees
  return out.length === 0 ? undefined : out
}

/** The flag changes of one commit. */
export function flagChangesOf(commit: Commit): FlagChange[] {
  const actor = actorOf(commit.meta.principal)
  const out: FlagChange[] = []
  for (const change of commit.changes) {
    if (change.table !== 'flags') continue
    const before = change.before as FlagRow | null
    const after = change.after as FlagRow | null
    const base = { id: change.seq, actor, at: commit.at }
    // a row rewritten at the same revision only gained or lost another environment's copy of its
    // state (an environment created or removed): no flag changed (docs/environments.md)
    if (before && after && before.revision === after.revision) continue
    if (before && after && (before.archived === true || after.archived === true)) {
      // archived: gone for every client; restored: back; a change while archived tells of nothing (docs/api.md#archive)
      if (before.archived === true && after.archived === true) continue
      const type = after.archived === true ? 'flag.deleted' : 'flag.created'
      out.push({ ...base, type, name: after.name, revision: after.revision })
    } else if (before && after) {
      const environments = changedEnvironments(before, after)
      out.push({
        ...base,
        ...(environments === undefined ? {} : { environments }),
        type: 'flag.updated',
        name: after.name,
        revision: after.revision,
        ...(before.name !== after.name ? { previousName: before.name } : {}),
      })
    } else if (after) out.push({ ...base, type: 'flag.created', name: after.name, revision: after.revision })
    else if (before) out.push({ ...base, type: 'flag.deleted', name: before.name, revision: before.revision })
  }
  return out
}

/** Starts the feed over `store`. */
export function createFlagChangeFeed(store: Store): FlagChangeFeed {
  const listeners = new Set<(batch: FlagChangeBatch) => void>()
  let delivered = store.committed().revision
  const unsubscribe = store.onCommit((commit) => {
    for (const change of commit.changes) if (change.seq > delivered) delivered = change.seq
    const changes = flagChangesOf(commit)
    const segments = segmentChangesOf(commit)
    if (changes.length === 0 && segments.length === 0) return
    const batch = { changes, segments, revision: store.committed().revisionOf('flags') }
    for (const listener of listeners) listener(batch)
  })
  return {
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    get delivered() {
      return delivered
    },
    async page(afterId, upTo, { limit = CATCH_UP_PAGE, withSegments = false } = {}) {
      if (afterId >= upTo) return []
      const actionPrefix = withSegments ? ['flag.', 'segment.'] : 'flag.'
      const entries = await store.audit.query({ afterId, actionPrefix, limit, maxBytes: CATCH_UP_PAGE_BYTES })
      const out: FlagChange[] = []
      for (const entry of entries) {
        if (entry.id > upTo) break
        // a change while archived tells no client anything, as live (docs/api.md#archive)
        if (archivedBothSides(entry)) continue
        out.push(flagChangeOf(entry))
      }
      return out
    },
    close: unsubscribe,
  }
}
