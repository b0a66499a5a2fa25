/**
 * Writes a whole state file durably, as a checkpoint does (`state-checkpoint.ts`): the chunks of its
 * text go to a temp file beside it (created exclusively, mode 0600) one write at a time, so requests
 * are answered between them; then fsync, rename over the state file and fsync of the directory.
 * Readers and a crash see the old file or the new one, never a mix; a crash leaves a temp file that
 * opening removes.
 */

import { randomBytes } from 'node:crypto'
import { open, rename, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fsyncDirectory, tempPrefix } from '../io/atomic-write.ts'
import { writeAll } from '../io/write-all.ts'
import type { DiskFaults } from './change-journal.ts'
import type { StateData } from './memory-state.ts'
import { type KnownText, type LastUsed, stateChunks } from './state-text-builder.ts'

/**
 * Replaces the state file at `path` with `data` (see module comment), reusing the rows' texts `known`
 * gives; answers its size in bytes.
 */
export async function writeStateFile(
  path: string,
  data: StateData,
  lastUsed: LastUsed,
  faults?: DiskFaults,
  known?: KnownText,
): Promise<number> {
  await faults?.(path)
  const tmp = join(dirname(path), `${tempPrefix(path)}${process.pid}-${randomBytes(6).toString('hex')}`)
  const handle = await open(tmp, 'wx', 0o600)
  let bytes = 0
  try {
    for (const chunk of stateChunks(data, lastUsed, undefined, known)) bytes += await writeAll(handle, chunk)
    await handle.sync()
    await handle.close()
    await rename(tmp, path)
  } catch (err) {
    await handle.close().catch(() => {})
    await rm(tmp, { force: true }).catch(() => {})
    throw err
  }
  await fsyncDirectory(dirname(path))
  return bytes
}
