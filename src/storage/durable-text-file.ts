/**
 * A lowdb adapter for a text file that is replaced durably (temp file → fsync → rename → fsync
 * directory). lowdb's own adapters rename without fsync, so a power loss could lose an acknowledged
 * write; this one does not. The store serialises state itself (caching each row's JSON), so the
 * adapter carries text. Besides lowdb's `write`, it can write in two halves (`stage`, then the
 * staged file's `commit`), which the store's group commit uses to write the state file while the
 * audit journal is appended.
 */

import { readFile } from 'node:fs/promises'
import type { Adapter } from 'lowdb'
import { type StagedFile, stageFile } from '../io/atomic-write.ts'

/** How bytes reach the disk; tests inject a failing one to simulate a full disk. */
export type FileWriter = (path: string, content: string) => Promise<void>

/** The adapter (see module comment). */
export class DurableTextFile implements Adapter<string> {
  constructor(
    readonly path: string,
    private readonly writer?: FileWriter,
  ) {}

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
    await (await this.stage(text)).commit()
  }

  /**
   * Puts `content` on disk beside the file before it resolves; the file changes when the result is
   * committed. An injected writer does all of its work at commit, so it is given its own text (the
   * bytes may be a buffer the caller reuses once this resolves).
   */
  async stage(content: string | Uint8Array): Promise<StagedFile> {
    const writer = this.writer
    if (writer === undefined) return stageFile(this.path, content)
    const text = typeof content === 'string' ? content : new TextDecoder().decode(content)
    return { commit: () => writer(this.path, text), discard: async () => {} }
  }
}
