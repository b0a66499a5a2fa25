/**
 * The text of the state file (format in `state-file-format.ts`), produced in chunks of about 64 KB
 * in file order. The state file is written only by a checkpoint (`state-checkpoint.ts`), in the
 * background: a chunk is written before the next is built, so the event loop answers requests
 * between chunks and no file-sized string or buffer is ever made. Nothing is cached per row: a
 * cached text per row cost a second copy of the state in memory (docs/performance.md#memory), worth
 * it only while every commit rewrote the whole file. The chunk size keeps each pause short under
 * writes while a checkpoint runs (docs/performance.md#writes).
 */

import type { StateData } from './memory-state.ts'
import { TABLES, type Table, USAGE_TABLES, type UsageTable } from './store.ts'

/** The schema version this build writes; files with a higher one were written by a newer flagd. */
export const SCHEMA_VERSION = 6

/** The in-memory last use of a session or token, when newer than its row says. */
export type LastUsed = (table: UsageTable, id: string) => string | undefined

const CHUNK = 64 * 1024

const isUsageTable = (table: Table): table is UsageTable => (USAGE_TABLES as readonly Table[]).includes(table)

/** The JSON text of a row when one was made already (its change journal line's, docs/performance.md#imports). */
export type KnownText = (row: object) => string | undefined

/** A row's member of its table object, with its last use when one is newer than the row's. */
function member(id: string, row: object, touched: string | undefined, known: KnownText | undefined): string {
  const stored = (row as { lastUsedAt?: string | null }).lastUsedAt
  const shown = touched !== undefined && (stored == null || touched > stored) ? { ...row, lastUsedAt: touched } : row
  return `${JSON.stringify(id)}:${(shown === row ? known?.(row) : undefined) ?? JSON.stringify(shown)}`
}

/**
 * The state file's text of `data`, as chunks of about `chunk` characters that join to the file;
 * `known` gives the texts of rows serialised already (the same text either way).
 */
export function* stateChunks(data: StateData, lastUsed: LastUsed, chunk = CHUNK, known?: KnownText): Generator<string> {
  const id = data.storeId === undefined ? '' : `,"storeId":${JSON.stringify(data.storeId)}`
  let text = `{"schemaVersion":${SCHEMA_VERSION}${id},"revision":${data.revision},"revisions":${JSON.stringify(data.revisions)}`
  for (const table of TABLES) {
    text += `,${JSON.stringify(table)}:{`
    const usage = isUsageTable(table)
    let first = true
    for (const [id, row] of data.tables[table]) {
      text += `${first ? '' : ','}${member(id, row, usage ? lastUsed(table, id) : undefined, known)}`
      first = false
      if (text.length >= chunk) {
        yield text
        text = ''
      }
    }
    text += '}'
  }
  yield `${text}}`
}
