/**
 * The text of the state file (format in `state-file-format.ts`), built so that a write costs what changed
 * rather than what is stored. Each row's member (`"<id>":<row JSON>`) is cached with the row (rows
 * are frozen). A `StateText` also remembers, per table, the members it last wrote in file order: a
 * table whose Map is the one written last time is reused as it is, and a table whose rows were only
 * replaced has just those members swapped before the members are joined again. Inserts and deletes
 * (which move positions) and the session and token tables (whose last-use times change outside
 * commits) are built whole.
 *
 * Measured under 16 writers over 1,000 flags (docs/performance.md), building every member on every write took a
 * quarter of the daemon's main thread; the group commit writes a few hundred times a second.
 *
 * The text is handed out as pieces (`pieces`): strings and runs of members, in file order. Joined
 * they are the file; the store encodes them straight into a reused byte buffer (`StateBytes`), so a
 * write makes no file-sized string. Joining a table and then the file made two file-sized strings
 * per write, and under sustained writes the collector let them pile up (docs/performance.md#what-start-up-does-not-load).
 */

import type { StateData } from './memory-state.ts'
import { type Change, TABLES, type Table, USAGE_TABLES, type UsageTable } from './store.ts'

/** The schema version this build writes; files with a higher one were written by a newer flagd. */
export const SCHEMA_VERSION = 6

/** The in-memory last use of a session or token, when newer than its row says. */
export type LastUsed = (table: UsageTable, id: string) => string | undefined

const entryText = new WeakMap<object, string>()
const touchedText = new WeakMap<object, { at: string; text: string }>()

/** A row's member of its table object, cached with the row (and with its last use, if touched). */
function member(id: string, row: object, touched?: string): string {
  if (touched !== undefined) {
    const hit = touchedText.get(row)
    if (hit?.at === touched) return hit.text
    const text = `${JSON.stringify(id)}:${JSON.stringify({ ...row, lastUsedAt: touched })}`
    touchedText.set(row, { at: touched, text })
    return text
  }
  let text = entryText.get(row)
  if (text === undefined) {
    text = `${JSON.stringify(id)}:${JSON.stringify(row)}`
    entryText.set(row, text)
  }
  return text
}

/** A table as last written: its Map, its members in file order, where each id's member is. */
interface WrittenTable {
  rows: ReadonlyMap<string, object>
  members: string[]
  position: Map<string, number>
}

/** The state file in order: a string is itself, an array is members separated by commas. */
export type StatePieces = (string | readonly string[])[]

const isUsageTable = (table: Table): table is UsageTable => (USAGE_TABLES as readonly Table[]).includes(table)

/** Successive texts of one store's state (see module comment). */
export class StateText {
  private readonly written = new Map<Table, WrittenTable>()

  /**
   * The file text of `data`. `changes` are every change since the state this instance last wrote
   * (the batch's); without them, or when they cannot be applied by replacement, tables are built whole.
   */
  of(data: StateData, lastUsed: LastUsed, changes?: readonly Change[]): string {
    return this.pieces(data, lastUsed, changes)
      .map((piece) => (typeof piece === 'string' ? piece : piece.join(',')))
      .join('')
  }

  /**
   * The same file as pieces (see module comment). A member array may be the one this instance keeps:
   * it is valid until the next call.
   */
  pieces(data: StateData, lastUsed: LastUsed, changes?: readonly Change[]): StatePieces {
    const pieces: StatePieces = [
      `{"schemaVersion":${SCHEMA_VERSION},"revision":${data.revision},"revisions":${JSON.stringify(data.revisions)}`,
    ]
    for (const table of TABLES) pieces.push(`,${JSON.stringify(table)}:{`, this.members(table, data.tables[table], lastUsed, changes), '}')
    pieces.push('}')
    return pieces
  }

  private members(
    table: Table,
    rows: ReadonlyMap<string, object>,
    lastUsed: LastUsed,
    changes: readonly Change[] | undefined,
  ): readonly string[] {
    if (isUsageTable(table)) {
      const members: string[] = []
      for (const [id, row] of rows) members.push(member(id, row, lastUsed(table, id)))
      return members
    }
    const last = this.written.get(table)
    if (last !== undefined && last.rows === rows) return last.members
    if (last !== undefined && changes !== undefined && replaceChanged(last, table, rows, changes)) return last.members
    const members: string[] = []
    const position = new Map<string, number>()
    for (const [id, row] of rows) {
      position.set(id, members.length)
      members.push(member(id, row))
    }
    this.written.set(table, { rows, members, position })
    return members
  }
}

/**
 * Brings `last` to `rows` when `changes` only replaced rows of `table` (no position moves);
 * answers false, changing nothing, otherwise.
 */
function replaceChanged(last: WrittenTable, table: Table, rows: ReadonlyMap<string, object>, changes: readonly Change[]): boolean {
  if (rows.size !== last.rows.size) return false
  const at: [number, string, object][] = []
  for (const change of changes) {
    if (change.table !== table) continue
    if (change.before === null || change.after === null) return false
    const index = last.position.get(change.id)
    const row = rows.get(change.id)
    if (index === undefined || row === undefined) return false
    at.push([index, change.id, row])
  }
  for (const [index, id, row] of at) last.members[index] = member(id, row)
  last.rows = rows
  return true
}
