/**
 * Opening the file store: the state file's data brought forward by the change journal's lines past
 * its revision (docs/operations.md#durability). Lines the state file already holds (a crash between
 * a checkpoint's rename and the deletion of the segments it covered) are skipped, except for their
 * last-use times, which only ever move forward. A journal that does not continue the state file
 * (its next line starts at another revision: the state file was put back from an older backup while
 * newer changes stayed in the journal) stops start-up with a sentence saying what to do.
 */

import type { StoredAuditEntry } from '../domain/audit-entry.ts'
import type { JournalBatch } from './change-journal.ts'
import { CorruptStateError } from './corrupt-state-error.ts'
import { Draft, type StateData } from './memory-state.ts'
import type { Rows, Table } from './store.ts'

/** What replaying found: the state now, how many lines it applied, and their audit entries. */
export interface Replayed {
  data: StateData
  applied: number
  audit: StoredAuditEntry[]
}

/** `state` with `batches` (the journal, oldest first) applied; `where` names the journal in errors. */
export function replayJournal(state: StateData, batches: readonly JournalBatch[], where: string): Replayed {
  if (batches.length === 0) return { data: state, applied: 0, audit: [] }
  const draft = new Draft(state)
  const audit: StoredAuditEntry[] = []
  let applied = 0
  for (const batch of batches) {
    if (batch.store !== undefined && state.storeId !== undefined && batch.store !== state.storeId)
      throw new CorruptStateError(
        where,
        `its changes belong to another data directory (store ${batch.store}), not to this state file (store ${state.storeId}). Move the journal away: it was copied here from elsewhere`,
        'change journal',
      )
    if (batch.to > draft.revision) {
      if (batch.from !== draft.revision)
        throw new CorruptStateError(
          where,
          `its changes continue from revision ${batch.from} but the state file is at revision ${draft.revision}. If the state file was restored from a backup, move the journal away to start from the backup (its changes are not in it)`,
          'change journal',
        )
      applyChanges(draft, batch, where)
      audit.push(...batch.audit)
      applied++
    }
    applyUses(draft, batch)
  }
  return { data: draft.seal(), applied, audit }
}

/** A batch's rows, each at its last value in the batch: the ones it changes go first, so names move freely. */
function applyChanges(draft: Draft, batch: JournalBatch, where: string): void {
  const last = new Map<string, { table: Table; id: string; row: Rows[Table] | null }>()
  for (const [seq, table, id, row] of batch.changes) {
    last.set(`${table}\u0000${id}`, { table, id, row })
    draft.revisions[table] = seq
  }
  for (const { table, id } of last.values()) draft.remove(table, id)
  try {
    for (const { table, row } of last.values()) if (row !== null) draft.set(table, row as never)
  } catch (err) {
    throw new CorruptStateError(where, (err as Error).message.replace('store invariant: ', 'two records share a name: '), 'change journal')
  }
  draft.revision = batch.to
}

/** A batch's last-use times, where newer than the rows'. */
function applyUses(draft: Draft, batch: JournalBatch): void {
  for (const [table, id, at] of batch.uses) {
    const row = draft.tables[table].get(id)
    if (row !== undefined && (row.lastUsedAt === null || at > row.lastUsedAt)) draft.set(table, { ...row, lastUsedAt: at } as never)
  }
}
