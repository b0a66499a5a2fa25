/**
 * A lowdb adapter that persists through `writeFileAtomic` (temp → fsync → rename → fsync dir) and
 * refuses to read a damaged file. lowdb's own JSONFile adapter is not durable, and its presets
 * switch to memory under NODE_ENV=test, so neither is used.
 */

import type { Adapter } from 'lowdb'
import { readFile } from 'node:fs/promises'
import { writeFileAtomic } from './atomic-write.ts'
import { parseState, type State } from './state.ts'

/** How the adapter puts bytes on disk; tests inject a failing one to simulate a full disk. */
export type FileWriter = (path: string, content: string) => Promise<void>

/** The lowdb adapter; `lastWritten` keeps the text of the last durable write. */
export class DurableJsonAdapter implements Adapter<State> {
  lastWritten: string | undefined

  constructor(
    readonly path: string,
    private readonly writer: FileWriter = writeFileAtomic,
  ) {}

  /** Reads the state, `null` when there is no file yet; a damaged file throws. */
  async read(): Promise<State | null> {
    let text: string
    try {
      text = await readFile(this.path, 'utf8')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw err
    }
    const state = parseState(this.path, text)
    this.lastWritten = text
    return state
  }

  /** Serialises and durably replaces the file. */
  async write(data: State): Promise<void> {
    const text = JSON.stringify(data)
    await this.writer(this.path, text)
    this.lastWritten = text
  }
}
