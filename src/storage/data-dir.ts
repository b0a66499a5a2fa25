/** The data directory itself: created or checked, tightened to 0700, problems named in sentences. */

import { constants } from 'node:fs'
import { access, chmod, mkdir, stat } from 'node:fs/promises'

/**
 * Creates the data directory (0700) or checks the existing one and tightens it to 0700: it holds
 * the secret, password hashes and flag values. Problems become sentences naming the directory.
 */
export async function prepareDataDir(dataDir: string): Promise<void> {
  const info = await stat(dataDir).catch((err: NodeJS.ErrnoException) =>
    err.code === 'ENOENT' ? undefined : Promise.reject(dataDirProblem(dataDir, err)),
  )
  if (info && !info.isDirectory())
    throw new Error(`data directory ${dataDir} is not a directory; point --data-dir (or dataDir) at a directory`)
  try {
    if (!info) await mkdir(dataDir, { recursive: true, mode: 0o700 })
    else if ((info.mode & 0o077) !== 0 && info.uid === process.getuid?.()) await chmod(dataDir, 0o700)
    await access(dataDir, constants.W_OK | constants.X_OK)
  } catch (err) {
    throw dataDirProblem(dataDir, err as NodeJS.ErrnoException)
  }
}

function dataDirProblem(dataDir: string, err: NodeJS.ErrnoException): Error {
  const why: Record<string, string> = {
    EACCES: 'this user may not create or write it; run flagd as its owner, or fix its permissions',
    EPERM: 'this user may not create or write it; run flagd as its owner, or fix its permissions',
    EROFS: 'it is on a read-only file system',
    ENOTDIR: 'a part of its path is a file, not a directory',
    EEXIST: 'a part of its path is a file, not a directory',
  }
  return new Error(`data directory ${dataDir} cannot be used: ${(err.code && why[err.code]) ?? err.message}`)
}
