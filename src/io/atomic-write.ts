/**
 * Durable replacement of a file: the new content goes to a temp file created exclusively with mode
 * 0600 and fsynced, is renamed over the target, and the directory is fsynced so the rename itself
 * survives a power loss. Readers therefore always see either the old or the new file, never a mix.
 *
 * The two halves are separate (`stageFile`, then `commit`) so that a store can write its state file
 * while it appends its audit journal, and rename only once both are on disk. Each half makes as few
 * trips to Bun's I/O threads as it can (one `writeFile` that creates, writes, fsyncs and closes; a
 * rename; one fsync of the directory): under load every trip also waits its turn in the event loop,
 * and the store's group commit waits for all of them (the figures are in docs/performance.md).
 */

import { randomBytes } from 'node:crypto'
import { closeSync, fsync, openSync } from 'node:fs'
import { readdir, rename, rm, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

const TEMP_MARK = '.tmp-'

/** The prefix of temp files that `writeFileAtomic` leaves behind if it dies mid-write. */
export function tempPrefix(target: string): string {
  return `${basename(target)}${TEMP_MARK}`
}

/** New content of a file, durable on disk under a temp name, not yet in place. */
export interface StagedFile {
  /** Renames the content over the target and makes the rename durable. */
  commit(): Promise<void>
  /** Removes the temp file (the write is abandoned). */
  discard(): Promise<void>
}

/** Writes `content` durably next to `target` under a temp name (see module comment). */
export async function stageFile(target: string, content: string | Uint8Array): Promise<StagedFile> {
  const tmp = join(dirname(target), `${tempPrefix(target)}${process.pid}-${randomBytes(6).toString('hex')}`)
  const discard = () => rm(tmp, { force: true }).catch(() => {})
  try {
    // one call: create exclusively, write, fsync (`flush`) and close
    await writeFile(tmp, content, { flag: 'wx', mode: 0o600, flush: true })
  } catch (err) {
    await discard()
    throw err
  }
  return {
    async commit() {
      try {
        await rename(tmp, target)
      } catch (err) {
        await discard()
        throw err
      }
      await fsyncDirectory(dirname(target))
    },
    discard,
  }
}

/** Writes `content` to `target` atomically and durably (see module comment). */
export async function writeFileAtomic(target: string, content: string | Uint8Array): Promise<void> {
  await (await stageFile(target, content)).commit()
}

/** Fsyncs a directory so that entries created or renamed in it are durable. */
export async function fsyncDirectory(dir: string): Promise<void> {
  // opening and closing a directory costs microseconds; only the fsync goes to an I/O thread
  const fd = openSync(dir, 'r')
  try {
    await new Promise<void>((resolve, reject) => fsync(fd, (err) => (err ? reject(err) : resolve())))
  } finally {
    closeSync(fd)
  }
}

/** Removes temp files a crashed writer left next to `target`; returns how many it removed. */
export async function removeStaleTempFiles(target: string): Promise<number> {
  const prefix = tempPrefix(target)
  const dir = dirname(target)
  let removed = 0
  for (const name of await readdir(dir)) {
    if (!name.startsWith(prefix)) continue
    await rm(join(dir, name), { force: true })
    removed++
  }
  return removed
}
