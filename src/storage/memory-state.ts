/**
 * State in memory, as every store keeps it: one map per table (by id), a name index for flags, and
 * the revisions. A `Draft` is the state a group commit is building: it shares the maps of the state it
 * starts from and copies a table only when it first writes to it, so a commit costs a copy of the
 * tables it touches, not of everything. Once a batch is durable its draft becomes the committed state
 * and is never written again. Rows are frozen on the way in, so they can be shared and cached safely.
 */

import { deepFreeze } from '../domain/deep-freeze.ts'
import { PreconditionFailedError } from '../domain/errors.ts'
import type { Flag } from '../domain/flag.ts'
import type { Segment } from '../domain/segment.ts'
import { type Change, type Rows, type Snapshot, TABLES, type Table, type Tx } from './store.ts'

type TableMaps = { [T in Table]: Map<string, Rows[T]> }

/** The data of one state: tables by id, flags by name, revisions. */
export interface StateData {
  readonly tables: TableMaps
  readonly flagsByName: Map<string, Flag>
  readonly revision: number
  readonly revisions: Readonly<Record<Table, number>>
}

/** An empty state at revision 0. */
export function emptyStateData(): StateData {
  return {
    tables: { flags: new Map(), users: new Map(), sessions: new Map(), tokens: new Map(), segments: new Map() },
    flagsByName: new Map(),
    revision: 0,
    revisions: { flags: 0, users: 0, sessions: 0, tokens: 0, segments: 0 },
  }
}

/** Builds state from rows (loading a file); throws when two flags share a name. */
export function stateFromRows(rows: { [T in Table]: Iterable<Rows[T]> }, revision: number, revisions: Record<Table, number>): StateData {
  const data = emptyStateData()
  const draft = new Draft(data)
  for (const table of TABLES) for (const row of rows[table]) draft.set(table, row as never)
  // stores written before segments existed have no counter for them
  return { ...draft.seal(), revision, revisions: { ...revisions, segments: revisions.segments ?? 0 } }
}

// segments by name and their rules, built once per segments table (a table Map is never changed once committed)
const segmentIndex = new WeakMap<Map<string, Segment>, { byName: Map<string, Segment>; rules: Map<string, unknown> }>()
function indexSegments(table: Map<string, Segment>) {
  let index = segmentIndex.get(table)
  if (!index) {
    const byName = new Map<string, Segment>()
    for (const segment of table.values()) byName.set(segment.name, segment)
    index = { byName, rules: new Map([...byName].map(([name, s]) => [name, s.rule])) }
    segmentIndex.set(table, index)
  }
  return index
}

/** A read-only view of state data (committed, or a draft seen from inside a transaction). */
export class MemorySnapshot implements Snapshot {
  constructor(private readonly data: StateData) {}
  get revision(): number {
    return this.data.revision
  }
  revisionOf(table: Table): number {
    return this.data.revisions[table]
  }
  row<T extends Table>(table: T, id: string): Rows[T] | undefined {
    return this.data.tables[table].get(id) as Rows[T] | undefined
  }
  get flags(): ReadonlyMap<string, Flag> {
    return this.data.flagsByName
  }
  get users() {
    return this.data.tables.users
  }
  get sessions() {
    return this.data.tables.sessions
  }
  get tokens() {
    return this.data.tables.tokens
  }
  get segments(): ReadonlyMap<string, Segment> {
    return indexSegments(this.data.tables.segments).byName
  }
  segmentRules(): ReadonlyMap<string, unknown> {
    return indexSegments(this.data.tables.segments).rules
  }
}

/** State being changed by one batch of transactions (see module comment). */
export class Draft implements StateData {
  tables: TableMaps
  flagsByName: Map<string, Flag>
  revision: number
  revisions: Record<Table, number>
  private readonly owned = new Set<Table>()

  constructor(base: StateData) {
    this.tables = { ...base.tables }
    this.flagsByName = base.flagsByName
    this.revision = base.revision
    this.revisions = { ...base.revisions }
  }

  private own<T extends Table>(table: T): Map<string, Rows[T]> {
    if (!this.owned.has(table)) {
      this.owned.add(table)
      ;(this.tables as Record<Table, Map<string, unknown>>)[table] = new Map(this.tables[table])
      if (table === 'flags') this.flagsByName = new Map(this.flagsByName)
    }
    return this.tables[table]
  }

  /** Inserts or replaces a row; a flag name held by another flag is a bug in the caller. */
  set<T extends Table>(table: T, row: Rows[T]): void {
    if (table === 'flags') {
      const flag = row as Flag
      const holder = this.flagsByName.get(flag.name)
      if (holder && holder.id !== flag.id) throw new Error(`store invariant: flag name ${flag.name} is held by ${holder.id}`)
    }
    const map = this.own(table)
    const before = map.get(row.id)
    map.set(row.id, deepFreeze(row))
    if (table === 'flags') {
      if (before) this.flagsByName.delete((before as Flag).name)
      this.flagsByName.set((row as Flag).name, row as Flag)
    }
  }

  /** Deletes a row if present. */
  remove(table: Table, id: string): void {
    const before = this.tables[table].get(id)
    if (!before) return
    this.own(table).delete(id)
    if (table === 'flags') this.flagsByName.delete((before as Flag).name)
  }

  /** Ends writing: the data is shared from now on and must not change. */
  seal(): StateData {
    this.owned.clear()
    return { tables: this.tables, flagsByName: this.flagsByName, revision: this.revision, revisions: { ...this.revisions } }
  }
}

/** A backup file requested by a transaction. */
export interface BackupRequest {
  fileName: string
  text: string
}

type Pending = { table: Table; id: string; before: Rows[Table] | null; after: Rows[Table] | null }

/** One transaction over a draft: records changes, undoes them on failure, numbers them on success. */
export class DraftTx implements Tx {
  readonly read: Snapshot
  readonly backups: BackupRequest[] = []
  private readonly pending = new Map<string, Pending>()
  private readonly undo: (() => void)[] = []

  constructor(private readonly draft: Draft) {
    this.read = new MemorySnapshot(draft)
  }

  private note(table: Table, id: string, before: Rows[Table] | undefined, after: Rows[Table] | null): void {
    const key = `${table}\u0000${id}`
    const seen = this.pending.get(key)
    if (seen) seen.after = after
    else this.pending.set(key, { table, id, before: before ?? null, after })
    this.undo.push(() => (before ? this.draft.set(table, before) : this.draft.remove(table, id)))
  }

  put<T extends Table>(table: T, row: Rows[T]): void {
    const before = this.draft.tables[table].get(row.id)
    this.draft.set(table, row)
    this.note(table, row.id, before, row)
  }

  delete(table: Table, id: string): void {
    const before = this.draft.tables[table].get(id)
    if (!before) return
    this.draft.remove(table, id)
    this.note(table, id, before, null)
  }

  expect(table: Table, id: string, revision: number, what: string): void {
    const row = this.draft.tables[table].get(id) as { revision?: number } | undefined
    const actual = row?.revision
    if (actual === revision) return
    const now = actual === undefined ? 'no longer exists' : `is at revision ${actual}`
    throw new PreconditionFailedError(
      `${what} ${now}, not ${revision}; read it again and retry`,
      actual === undefined ? {} : { revision: actual },
    )
  }

  backup(fileName: string, text: string): void {
    this.backups.push({ fileName, text })
  }

  /** Undoes every change (the work threw). */
  rollback(): void {
    for (let i = this.undo.length - 1; i >= 0; i--) this.undo[i]?.()
    this.pending.clear()
    this.backups.length = 0
  }

  /** Numbers the changes that really changed something and advances the draft's revisions. */
  finish(): Change[] {
    const out: Change[] = []
    for (const p of this.pending.values()) {
      if (p.before === p.after) continue
      const seq = ++this.draft.revision
      this.draft.revisions[p.table] = seq
      out.push({ seq, table: p.table, id: p.id, before: p.before, after: p.after } as Change)
    }
    return out
  }
}
