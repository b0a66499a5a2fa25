/**
 * Durable replacement of a file: the new content goes to a temp file created exclusively with mode
 * 0600, is fsynced, renamed over the target, and the directory is fsynced so the rename itself
 * survives a power loss. Readers therefore always see either the old or the new file, never a mix.
 */

import { randomBytes } from 'node:crypto'
import { open, rename, rm, readdir } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

const TEMP_MARK = '.tmp-'

/** The prefix of temp files that `writeFileAtomic` leaves behind if it dies mid-write. */
export function tempPrefix(target: string): string {
  return `${basename(target)}${TEMP_MARK}`
}

/** Writes `content` to `target` atomically and durably (see module comment). */
export async function writeFileAtomic(target: string, content: string | Uint8Array): Promise<void> {
  const tmp = join(dirname(target), `${tempPrefix(target)}${process.pid}-${randomBytes(6).toString('hex')}`)
  const fh = await open(tmp, 'wx', 0o600)
  try {
    await fh.writeFile(content)
    await fh.sync()
  } catch (err) {
    await fh.close().catch(() => {})
    await rm(tmp, { force: true }).catch(() => {})
    throw err
  }
  await fh.close()
  try {
    await rename(tmp, target)
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => {})
    throw err
  }
  await fsyncDirectory(dirname(target))
}

/** Fsyncs a directory so that entries created or renamed in it are durable. */
export async function fsyncDirectory(dir: string): Promise<void> {
  const fh = await open(dir, 'r')
  try {
    await fh.sync()
  } finally {
    await fh.close()
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
