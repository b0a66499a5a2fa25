/**
 * A dry run's transaction (docs/change-control.md#dry-runs): the same work an import or a promotion
 * does, over the committed state, into a scratch copy that nothing commits. What it changed is
 * then put to the write guard, the one the store runs before every commit, so a dry run can say
 * that applying it would be refused (`CHANGE_REQUEST_REQUIRED` in a protected environment) instead
 * of finding out later.
 */

import { canSeeFlag } from '../domain/access-policy.ts'
import { AppError } from '../domain/errors.ts'
import type { FlagRow } from '../domain/flag-row.ts'
import { checkPrerequisiteGraph, type FlagRowChange, segmentRulesOf } from '../domain/prerequisite-graph.ts'
import { keptRollouts } from '../domain/rollout-written.ts'
import type { Segment } from '../domain/segment.ts'
import { type GuardedChange, guardWrite, type WriteAuthority } from '../domain/write-guard.ts'
import type { Rows, Snapshot, Table, Tx } from '../storage/store.ts'

/** The error applying would answer, as an error body shows it: present on a dry run that would be refused. */
export interface ApplyError {
  code: string
  message: string
  details?: Record<string, unknown>
}

/** A table's rows by id with the scratch changes over them (`null`: deleted). */
type Overlay = Map<string, unknown>

/** A transaction over `base` that keeps its writes to itself, and the changes it made (for the guard). */
export function scratchTx(base: Snapshot): { tx: Tx; changes(): GuardedChange[] } {
  const overlays = new Map<Table, Overlay>()
  const firstBefore = new Map<string, GuardedChange>()
  let flags: Map<string, FlagRow> | undefined
  let segments: Map<string, Segment> | undefined
  const row = <T extends Table>(table: T, id: string): Rows[T] | undefined => {
    const overlay = overlays.get(table)
    if (overlay?.has(id)) return (overlay.get(id) ?? undefined) as Rows[T] | undefined
    return base.row(table, id)
  }
  /** Records `after` as the row `id` of `table` (null: deleted), keeping the by-name maps in step. */
  const write = (table: Table, id: string, after: unknown) => {
    const before = row(table, id) ?? null
    const key = `${table}\u0000${id}`
    const change = firstBefore.get(key)
    if (change === undefined) firstBefore.set(key, { table, before, after })
    else change.after = after
    if (!overlays.has(table)) overlays.set(table, new Map())
    overlays.get(table)?.set(id, after)
    if (table === 'flags') {
      flags ??= new Map(base.flags)
      if (before !== null) flags.delete((before as FlagRow).name)
      if (after !== null) flags.set((after as FlagRow).name, after as FlagRow)
    } else if (table === 'segments') {
      segments ??= new Map(base.segments)
      if (before !== null) segments.delete((before as Segment).name)
      if (after !== null) segments.set((after as Segment).name, after as Segment)
    }
  }
  const read: Snapshot = {
    revision: base.revision,
    revisionOf: (table) => base.revisionOf(table),
    row,
    get flags() {
      return flags ?? base.flags
    },
    users: base.users,
    sessions: base.sessions,
    tokens: base.tokens,
    get segments() {
      return segments ?? base.segments
    },
    environments: base.environments,
    changeRequests: base.changeRequests,
    segmentRules: () =>
      segments === undefined ? base.segmentRules() : new Map([...segments].map(([name, s]) => [name, s.rule as unknown])),
    shadowedSegments: () => base.shadowedSegments(),
  }
  const tx: Tx = {
    read,
    put: (table, r) => write(table, (r as { id: string }).id, r),
    delete: (table, id) => {
      if (row(table, id) !== undefined) write(table, id, null)
    },
    expect: () => {},
    backup: () => {},
  }
  return { tx, changes: () => [...firstBefore.values()].filter((c) => c.before !== null || c.after !== null) }
}

/**
 * The error applying `work` over `base` as `who` would meet, or `undefined` when it would commit:
 * the work's own (a rule left without its segment), or the write guard's (`CHANGE_REQUEST_REQUIRED`
 * for a protected environment, `FORBIDDEN`). Nothing is written; an unexpected fault is thrown.
 */
export function applyRefusal(who: WriteAuthority, base: Snapshot, work: (tx: Tx) => void): ApplyError | undefined {
  const { tx, changes } = scratchTx(base)
  try {
    work(tx)
    // rollouts settled as the store settles them, so one sent as it is stored moves nothing; the
    // time a new one would be written at is not compared (docs/guarded-rollouts.md#status-and-percent)
    const settled = changes().map((c) =>
      c.table === 'flags' && c.after !== null ? { ...c, after: keptRollouts(c.before as FlagRow | null, c.after as FlagRow, '') } : c,
    )
    // prerequisites across flags, as the store checks them (docs/api.md#prerequisites)
    checkPrerequisiteGraph(
      tx.read.flags,
      settled.filter((c) => c.table === 'flags') as unknown as FlagRowChange[],
      segmentRulesOf(tx.read.segments),
      (name) => canSeeFlag(who.principal, name),
    )
    guardWrite(who, tx.read, settled)
    return undefined
  } catch (err) {
    if (!(err instanceof AppError)) throw err
    const { code, message, details } = err
    return { code, message, ...(details ? { details } : {}) }
  }
}
