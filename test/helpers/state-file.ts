/** Reading a data directory's state file the way the store does, for tests that inspect it after a crash. */

import { readFileSync } from 'node:fs'
import { MemorySnapshot } from '../../src/storage/memory-state.ts'
import { parseStateFile } from '../../src/storage/state-file-format.ts'
import type { Snapshot } from '../../src/storage/store.ts'

/** Parses the state file at `path` (throws like the store on a damaged file). */
export function readStateFile(path: string): Snapshot {
  return new MemorySnapshot(parseStateFile(path, readFileSync(path, 'utf8')).data)
}
