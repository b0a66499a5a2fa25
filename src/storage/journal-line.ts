/**
 * One line of the change journal (`change-journal.ts`), read back: a line that is not JSON is a torn
 * write (the caller decides whether that may be); a line that is JSON but not a batch, or whose rows
 * fail the checks every stored row passes, is damage and stops start-up naming it.
 */

import { isJsonObject } from '../domain/json-object.ts'
import type { JournalBatch } from './change-journal.ts'
import { CorruptStateError } from './corrupt-state-error.ts'
import { checkRow, isTime } from './state-row-checks.ts'
import { TABLES, type Table, USAGE_TABLES, type UsageTable } from './store.ts'

const isRevision = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0

/** The batch of a journal line, or `undefined` when the line is not JSON (a torn write). */
export function parseJournalLine(path: string, text: string): JournalBatch | undefined {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    return undefined
  }
  const bad = (problem: string): never => {
    throw new CorruptStateError(path, problem, 'change journal')
  }
  if (!isJsonObject(raw)) return bad('a line is not a JSON object')
  const { store, from, to, at, changes, uses, audit } = raw
  if (store !== undefined && typeof store !== 'string') return bad('a line has an invalid store id')
  if (!isRevision(from) || !isRevision(to) || to < from) return bad('a line has invalid revisions')
  const where = `the line of revisions ${from}–${to}`
  if (!isTime(at)) bad(`${where} has no valid time`)
  if (!Array.isArray(changes) || !Array.isArray(uses) || !Array.isArray(audit)) return bad(`${where} is missing its changes, uses or audit`)
  let seq = from
  for (const change of changes) {
    if (!Array.isArray(change) || change.length !== 4) return bad(`${where} has a change that is not [seq, table, id, row]`)
    const [n, table, id, row] = change as [unknown, unknown, unknown, unknown]
    if (!isRevision(n) || n <= seq || n > to) bad(`${where} has a change numbered out of order`)
    if (!TABLES.includes(table as Table) || typeof id !== 'string') return bad(`${where} has a change of an unknown table or id`)
    if (row !== null) checkRow(path, table as Table, id, row, `${table}[${JSON.stringify(id)}] at revision ${n}`)
    seq = n as number
  }
  if (seq !== to) bad(`${where} does not end at its last change`)
  for (const use of uses) {
    const [table, id, when] = Array.isArray(use) ? use : []
    if (!USAGE_TABLES.includes(table as UsageTable) || typeof id !== 'string' || !isTime(when)) bad(`${where} has an invalid last-use time`)
  }
  for (const stored of audit) if (!isJsonObject(stored) || !isJsonObject(stored.entry)) bad(`${where} has an invalid audit entry`)
  return raw as unknown as JournalBatch
}
