/**
 * State in memory, as every store keeps it: one map per table (by id), name indexes for flags and
 * segments, and the revisions. A `Draft` is the state a group commit is building: it shares the maps
 * of the state it starts from and forks a table only when it first writes to it; a fork copies only
 * the rows changed since the table's shared base (`LayeredMap`), so a commit costs its change, not a
 * copy of the tables it touches. Once a batch is durable its draft becomes the committed state
 * and is never written again. Rows are frozen on the way in, so they can be shared and cached safely.
 */

import { canSeeFlag } from '../domain/access-policy.ts'
import { deepFreeze } from '../domain/deep-freeze.ts'
import { PreconditionFailedError } from '../domain/errors.ts'
import type { FlagRow } from '../domain/flag-row.ts'
import { checkPrerequisiteGraph, dependentRevisions, type FlagRowChange, segmentRulesOf } from '../domain/prerequisite-graph.ts'
import { keptRollouts } from '../domain/rollout-written.ts'
import type { Segment } from '../domain/segment.ts'
import { guardWrite } from '../domain/write-guard.ts'
import { LayeredMap } from './layered-map.ts'
import { type Change, type CommitMeta, type Rows, type Snapshot, TABLES, type Table, type Tx } from './store.ts'

type TableMaps = { [T in Table]: LayeredMap<Rows[T]> }

/** The data of one state: tables by id, flags by name, revisions. */
export interface StateData {
  readonly tables: TableMaps
  readonly flagsByName: LayeredMap<FlagRow>
  /** Segments by name; kept by the draft like `flagsByName`, never derived from a table's identity. */
  readonly segmentsByName: LayeredMap<Segment>
  readonly revision: number
  readonly revisions: Readonly<Record<Table, number>>
  /** The file store's identity, which its change journal's lines carry (docs/operations.md#durability). */
  readonly storeId?: string
}

/** An empty state at revision 0. */
export function emptyStateData(): StateData {
  return {
    tables: {
      flags: LayeredMap.of(),
      users: LayeredMap.of(),
      sessions: LayeredMap.of(),
      tokens: LayeredMap.of(),
      segments: LayeredMap.of(),
      environments: LayeredMap.of(),
      changeRequests: LayeredMap.of(),
    },
    flagsByName: LayeredMap.of(),
    segmentsByName: LayeredMap.of(),
    revision: 0,
    revisions: { flags: 0, users: 0, sessions: 0, tokens: 0, segments: 0, environments: 0, changeRequests: 0 },
  }
}

/**
 * Builds state from rows (loading a file or a database); throws when two flags share a name. Two
 * segments of one name (only an older flagd could store them) do not stop the load: the newest
 * (highest revision, then latest update) is the one by name, the other stays a row so
 * `shadowedSegments()` can name it and the store can delete it.
 */
export function stateFromRows(rows: { [T in Table]: Iterable<Rows[T]> }, revision: number, revisions: Record<Table, number>): StateData {
  const data = emptyStateData()
  const draft = new Draft(data)
  for (const table of TABLES) {
    if (table === 'segments') continue
    for (const row of rows[table]) draft.set(table, row as never)
  }
  const segments = [...rows.segments].sort(
    (a, b) => a.revision - b.revision || (a.updatedAt < b.updatedAt ? -1 : a.updatedAt > b.updatedAt ? 1 : 0),
  )
  for (const segment of segments) draft.load(segment)
  // stores written before segments (or environments, or change requests) existed have no counter for them
  return {
    ...draft.seal(),
    revision,
    revisions: {
      ...revisions,
      segments: revisions.segments ?? 0,
      environments: revisions.environments ?? 0,
      changeRequests: revisions.changeRequests ?? 0,
    },
  }
}

// segment rules by name, for compiling `$ref`: built once per committed name index (never changed once sealed)
const committedRules = new WeakMap<ReadonlyMap<string, Segment>, ReadonlyMap<string, unknown>>()
const rulesOf = (byName: ReadonlyMap<string, Segment>) => new Map([...byName].map(([name, s]) => [name, s.rule as unknown]))

/**
 * A read-only view of state data: committed (`live` false), or a draft seen from inside a
 * transaction (`live` true), whose maps change under it, so nothing is cached for it.
 */
export class MemorySnapshot implements Snapshot {
  constructor(
    private readonly data: StateData,
    private readonly live = false,
  ) {}
  get revision(): number {
    return this.data.revision
  }
  revisionOf(table: Table): number {
    return this.data.revisions[table]
  }
  row<T extends Table>(table: T, id: string): Rows[T] | undefined {
    return this.data.tables[table].get(id) as Rows[T] | undefined
  }
  get flags(): ReadonlyMap<string, FlagRow> {
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
    return this.data.segmentsByName
  }
  get environments() {
    return this.data.tables.environments // by id, which is the name
  }
  get changeRequests() {
    return this.data.tables.changeRequests
  }
  segmentRules(): ReadonlyMap<string, unknown> {
    const byName = this.data.segmentsByName
    if (this.live) return rulesOf(byName)
    let rules = committedRules.get(byName)
    if (!rules) committedRules.set(byName, (rules = rulesOf(byName)))
    return rules
  }
  shadowedSegments(): readonly Segment[] {
    const out: Segment[] = []
    for (const segment of this.data.tables.segments.values()) if (this.data.segmentsByName.get(segment.name) !== segment) out.push(segment)
    return out
  }
}

/** State being changed by one batch of transactions (see module comment). */
export class Draft implements StateData {
  tables: TableMaps
  flagsByName: LayeredMap<FlagRow>
  segmentsByName: LayeredMap<Segment>
  revision: number
  revisions: Record<Table, number>
  private readonly owned = new Set<Table>()

  readonly storeId: string | undefined

  constructor(base: StateData) {
    this.tables = { ...base.tables }
    this.flagsByName = base.flagsByName
    this.segmentsByName = base.segmentsByName
    this.revision = base.revision
    this.revisions = { ...base.revisions }
    this.storeId = base.storeId
  }

  private own<T extends Table>(table: T): LayeredMap<Rows[T]> {
    if (!this.owned.has(table)) {
      this.owned.add(table)
      ;(this.tables as Record<Table, LayeredMap<unknown>>)[table] = this.tables[table].fork()
      if (table === 'flags') this.flagsByName = this.flagsByName.fork()
      if (table === 'segments') this.segmentsByName = this.segmentsByName.fork()
    }
    return this.tables[table]
  }

  /** The name index of `table`, when it has one. */
  private byName(table: Table): LayeredMap<FlagRow | Segment> | undefined {
    return table === 'flags' ? this.flagsByName : table === 'segments' ? this.segmentsByName : undefined
  }

  /** Inserts or replaces a row; a flag or segment name held by another row is a bug in the caller. */
  set<T extends Table>(table: T, row: Rows[T]): void {
    const named = this.byName(table)
    if (named) {
      const { name } = row as FlagRow | Segment
      const holder = named.get(name)
      if (holder && holder.id !== row.id) throw new Error(`store invariant: ${table.slice(0, -1)} name ${name} is held by ${holder.id}`)
    }
    const map = this.own(table)
    const before = map.get(row.id) as FlagRow | Segment | undefined
    const frozen = deepFreeze(row)
    map.set(row.id, frozen)
    const index = this.byName(table) // own() may have copied it
    if (index) {
      if (before && index.get(before.name) === before) index.delete(before.name)
      index.set((frozen as FlagRow | Segment).name, frozen as FlagRow | Segment)
    }
  }

  /** Loads a segment row from storage; a row of a name already loaded takes the name over (see `stateFromRows`). */
  load(segment: Segment): void {
    const frozen = deepFreeze(segment)
    this.own('segments').set(segment.id, frozen)
    this.segmentsByName.set(segment.name, frozen)
  }

  /** Deletes a row if present. */
  remove(table: Table, id: string): void {
    const before = this.tables[table].get(id) as FlagRow | Segment | undefined
    if (!before) return
    this.own(table).delete(id)
    const index = this.byName(table)
    if (index && index.get(before.name) === before) index.delete(before.name)
  }

  /** Ends writing: the data is shared from now on and must not change. */
  seal(): StateData {
    // a batch that changed many rows (an import, a replace that deleted thousands) leaves a large
    // layer over a base that still holds the rows it replaced or deleted: a new base lets them go now
    for (const table of this.owned) (this.tables as Record<Table, LayeredMap<unknown>>)[table] = this.tables[table].settled()
    if (this.owned.has('flags')) this.flagsByName = this.flagsByName.settled()
    if (this.owned.has('segments')) this.segmentsByName = this.segmentsByName.settled()
    this.owned.clear()
    return {
      tables: this.tables,
      flagsByName: this.flagsByName,
      segmentsByName: this.segmentsByName,
      revision: this.revision,
      revisions: { ...this.revisions },
      ...(this.storeId === undefined ? {} : { storeId: this.storeId }),
    }
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
    this.read = new MemorySnapshot(draft, true)
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

  /**
   * Checks the flag and segment writes against who makes them and every protected environment
   * (`guardWrite`: the one check no path can forget) and answers `meta` as the commit records it,
   * naming the rows whose change bypassed a protection; first settles the rollouts of the flag rows
   * written (`keptRollouts`, `at`: the commit's time). Throws as the work would (call `rollback`).
   */
  guarded(meta: CommitMeta, at: string): CommitMeta {
    // what the server keeps on rollouts, for every path that writes a flag; the guard's own trip
    // is written as it is (docs/guarded-rollouts.md#when-a-guard-trips)
    if (meta.source !== 'guard')
      for (const p of this.pending.values()) {
        if (p.table !== 'flags' || p.after === null) continue
        const settled = keptRollouts(p.before as FlagRow | null, p.after as FlagRow, at)
        if (settled === p.after) continue
        this.draft.set('flags', settled)
        p.after = settled
      }
    // prerequisites hold across flags: checked on the rows the transaction ends with, and each flag
    // requiring a changed one gets its new revision (docs/api.md#prerequisites)
    const flagChanges = [...this.pending.values()].filter((p) => p.table === 'flags') as unknown as FlagRowChange[]
    if (flagChanges.length > 0) {
      const index = checkPrerequisiteGraph(this.read.flags, flagChanges, segmentRulesOf(this.read.segments), (name) =>
        canSeeFlag(meta.principal, name),
      )
      for (const row of dependentRevisions(this.read.flags, index, flagChanges, at)) this.put('flags', row)
    }
    const bypassed = guardWrite(meta, this.read, [...this.pending.values()])
    const { bypassed: _claimed, ...rest } = meta
    return bypassed.length > 0 ? { ...rest, bypassed } : rest
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
