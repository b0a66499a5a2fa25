/** Reading a data directory's state the way opening the store does, for tests that inspect it after a crash. */

import { readFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { changeJournalDir, readChangeJournal } from '../../src/storage/change-journal.ts'
import { replayJournal } from '../../src/storage/journal-replay.ts'
import { MemorySnapshot } from '../../src/storage/memory-state.ts'
import { parseStateFile } from '../../src/storage/state-file-format.ts'
import type { Snapshot } from '../../src/storage/store.ts'

/**
 * The state stored in the data directory of the state file at `path`: the file with the change
 * journal replayed over it, changing nothing on disk (throws like the store on damage).
 */
export function readStateFile(path: string): Snapshot {
  const dataDir = dirname(path)
  const loaded = parseStateFile(path, readFileSync(path, 'utf8')).data
  const journal = readChangeJournal(dataDir, undefined, false)
  return new MemorySnapshot(replayJournal(loaded, journal.batches, changeJournalDir(dataDir)).data)
}

/** The state file alone, as an operator's copy of `flagd.json` holds it (without the change journal). */
export function readStateFileOnly(path: string): Snapshot {
  return new MemorySnapshot(parseStateFile(path, readFileSync(path, 'utf8')).data)
}
