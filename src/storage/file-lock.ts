/**
 * The single-writer lock on a data directory: an exclusive `flock(2)` on `<dataDir>/flagd.lock`,
 * called through `bun:ffi` because `node:fs` has no flock in Bun. The kernel drops the lock when the
 * holder's descriptor closes, so it dies with the process even on `kill -9`; the pid written into the
 * file only makes the error message helpful.
 */

import { dlopen, FFIType } from 'bun:ffi'
import { closeSync, constants, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'

const LOCK_EX = 2
const LOCK_NB = 4
const LOCK_UN = 8
const LIBC_NAMES = ['libc.so.6', 'libc.musl-x86_64.so.1', 'libc.musl-aarch64.so.1', 'libc.so']

type FlockFn = (fd: number, op: number) => number
let flockFn: FlockFn | undefined

function flock(): FlockFn {
  if (flockFn) return flockFn
  for (const name of LIBC_NAMES) {
    try {
      const lib = dlopen(name, { flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } })
      flockFn = (fd, op) => lib.symbols.flock(fd, op) as number
      return flockFn
    } catch {
      // try the next C library name
    }
  }
  throw new Error('cannot load the C library to lock the data directory (flock)')
}

/** Thrown when another live process holds the data directory. */
export class DirectoryInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holderPid: number | undefined,
  ) {
    super(
      `data directory ${dataDir} is in use by another flagd process${holderPid ? ` (pid ${holderPid})` : ''}; ` +
        'stop it first, or point --data-dir at another directory',
    )
    this.name = 'DirectoryInUseError'
  }
}

/** A held lock; `release()` is idempotent. */
export interface DirLock {
  readonly path: string
  release(): void
}

/** The lock file's path inside a data directory. */
export function lockPath(dataDir: string): string {
  return join(dataDir, 'flagd.lock')
}

/** Reads the pid recorded by the current holder, if any. */
export function readLockHolder(dataDir: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(lockPath(dataDir), 'utf8').trim(), 10)
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/** Takes the exclusive lock without waiting, or throws `DirectoryInUseError`. */
export function acquireDirLock(dataDir: string): DirLock {
  const path = lockPath(dataDir)
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o600)
  if (flock()(fd, LOCK_EX | LOCK_NB) !== 0) {
    closeSync(fd)
    throw new DirectoryInUseError(dataDir, readLockHolder(dataDir))
  }
  ftruncateSync(fd, 0)
  writeSync(fd, `${process.pid}\n`, 0)
  let held = true
  return {
    path,
    release() {
      if (!held) return
      held = false
      flock()(fd, LOCK_UN)
      closeSync(fd)
    },
  }
}
