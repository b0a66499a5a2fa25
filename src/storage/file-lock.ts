/**
 * The single-writer lock on a data directory. Where the C library's `flock(2)` can be loaded (Linux
 * with glibc or musl, macOS, FreeBSD), it is an exclusive `flock` on `<dataDir>/flagd.lock`, called
 * through `bun:ffi` because `node:fs` has no flock in Bun: the kernel drops it when the holder's
 * descriptor closes, so it dies with the process even on `kill -9`, and the pid written into the file
 * only makes the error message helpful. Where it cannot (another system, a C library under an
 * unknown name), the lock is a pid file created exclusively (`flagd.lock.pid`, by a hard link): a file left
 * by a holder that died is taken over once its pid is no longer a live process.
 */

import { dlopen, FFIType } from 'bun:ffi'
import { closeSync, constants, ftruncateSync, linkSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { join } from 'node:path'

// the same values on Linux, macOS and the BSDs (<sys/file.h>)
const LOCK_EX = 2
const LOCK_NB = 4
const LOCK_UN = 8

/** `flock(fd, op)` from the C library: 0 on success. */
export type FlockFn = (fd: number, op: number) => number

/** The names the C library goes by on `platform`, most likely first. */
export function libcNames(platform: NodeJS.Platform, arch: string): string[] {
  if (platform === 'darwin') return ['/usr/lib/libSystem.B.dylib', 'libSystem.B.dylib', 'libc.dylib']
  if (platform === 'freebsd' || platform === 'openbsd' || platform === 'netbsd') return ['libc.so.7', 'libc.so']
  const musl = arch === 'arm64' ? 'libc.musl-aarch64.so.1' : 'libc.musl-x86_64.so.1'
  return ['libc.so.6', musl, 'libc.so']
}

let systemFlock: FlockFn | null | undefined

/** The system's `flock`, or `null` when no C library under a known name offers it. */
export function loadFlock(names = libcNames(process.platform, process.arch)): FlockFn | null {
  for (const name of names) {
    try {
      const lib = dlopen(name, { flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } })
      return (fd, op) => lib.symbols.flock(fd, op) as number
    } catch {
      // try the next name
    }
  }
  return null
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
  /** How it is held: the kernel's `flock`, or the pid-file fallback. */
  readonly kind: 'flock' | 'pid-file'
  release(): void
}

/** The lock file's path inside a data directory. */
export function lockPath(dataDir: string): string {
  return join(dataDir, 'flagd.lock')
}

/** The fallback's pid file inside a data directory. */
export function pidLockPath(dataDir: string): string {
  return join(dataDir, 'flagd.lock.pid')
}

function readPid(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10)
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/** Reads the pid recorded by the current holder, if any. */
export function readLockHolder(dataDir: string): number | undefined {
  return readPid(lockPath(dataDir)) ?? readPid(pidLockPath(dataDir))
}

/** Whether `pid` is a live process (one this user may not signal still counts). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Options of `acquireDirLock`; tests pass `flock: null` to exercise the fallback. */
export interface LockOptions {
  flock?: FlockFn | null
}

/** Takes the exclusive lock without waiting, or throws `DirectoryInUseError`. */
export function acquireDirLock(dataDir: string, options: LockOptions = {}): DirLock {
  const flock = options.flock === undefined ? (systemFlock ??= loadFlock()) : options.flock
  return flock ? flockLock(dataDir, flock) : pidFileLock(dataDir)
}

function flockLock(dataDir: string, flock: FlockFn): DirLock {
  const path = lockPath(dataDir)
  const fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o600)
  if (flock(fd, LOCK_EX | LOCK_NB) !== 0) {
    closeSync(fd)
    throw new DirectoryInUseError(dataDir, readLockHolder(dataDir))
  }
  ftruncateSync(fd, 0)
  writeSync(fd, `${process.pid}\n`, 0)
  let held = true
  return {
    path,
    kind: 'flock',
    release() {
      if (!held) return
      held = false
      flock(fd, LOCK_UN)
      closeSync(fd)
    },
  }
}

function pidFileLock(dataDir: string): DirLock {
  const path = pidLockPath(dataDir)
  // the pid is written before the file appears under its name (a hard link fails if the name exists),
  // so a reader never sees an empty file that is about to be claimed
  const temp = `${path}.${process.pid}.tmp`
  writeFileSync(temp, `${process.pid}\n`, { mode: 0o600 })
  try {
    // two tries: the second after removing a file whose holder is gone
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        linkSync(temp, path)
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
        const holder = readPid(path)
        if (holder !== undefined && (holder === process.pid || isAlive(holder))) throw new DirectoryInUseError(dataDir, holder)
        rmSync(path, { force: true }) // left by a holder that died: take it over
        continue
      }
      let held = true
      return {
        path,
        kind: 'pid-file',
        release() {
          if (!held) return
          held = false
          if (readPid(path) === process.pid) rmSync(path, { force: true })
        },
      }
    }
    throw new DirectoryInUseError(dataDir, readPid(path))
  } finally {
    rmSync(temp, { force: true })
  }
}
