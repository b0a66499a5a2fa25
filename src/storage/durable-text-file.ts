/**
 * A lowdb adapter for a text file that is replaced durably (temp file → fsync → rename → fsync
 * directory). lowdb's own adapters rename without fsync, so a power loss could lose an acknowledged
 * write; this one does not. The store uses it to read, create and upgrade the state file; commits go
 * to the change journal and checkpoints write the state file themselves (`state-file-writer.ts`).
 */

import { readFile } from 'node:fs/promises'
import type { Adapter } from 'lowdb'
import { writeFileAtomic } from '../io/atomic-write.ts'

/** The adapter (see module comment). */
export class DurableTextFile implements Adapter<string> {
  constructor(readonly path: string) {}

  /** The file's text, or `null` when there is no file yet. */
  async read(): Promise<string | null> {
    try {
      return await readFile(this.path, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
  }

  /** Durably replaces the file. */
  async write(text: string): Promise<void> {
    await writeFileAtomic(this.path, text)
  }
}
