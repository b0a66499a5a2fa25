/**
 * The drop folder's files (docs/migrations.md): opening a dropped file safely, and moving it, with a report
 * beside it, to `processed/` or `failed/` as `<UTC YYYYMMDD-HHMMSS>_<name>` (`-2`, `-3`, … when
 * taken; shortened when the name would be too long to move). A dropped file is moved, never deleted.
 * Folders are 0700 and moved files 0600: flag values are readable by the daemon's user only.
 */

import { constants } from 'node:fs'
import { chmod, type FileHandle, lstat, mkdir, open, readdir, rename, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { utcStamp } from '../domain/utc-stamp.ts'
import { writeFileAtomic } from '../io/atomic-write.ts'

/** Longest file name most file systems take, in bytes. */
const NAME_MAX_BYTES = 255
/**
 * Room kept for `-NN`, the longest report suffix (`.result.json`) and the temp name the report is
 * written under first (`.tmp-<pid>-<12 hex>`, see `writeFileAtomic`).
 */
const RESERVED_BYTES = 4 + '.result.json'.length + '.tmp-'.length + 10 + 1 + 12

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path)
    return true
  } catch {
    return false
  }
}

/** Creates the folder, `processed/` and `failed/` (0700), and tightens existing ones. */
export async function prepareDropFolder(watchDir: string): Promise<void> {
  for (const dir of [watchDir, join(watchDir, 'processed'), join(watchDir, 'failed')]) {
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 })
      const info = await stat(dir)
      if ((info.mode & 0o077) !== 0 && info.uid === process.getuid?.()) await chmod(dir, 0o700)
    } catch (err) {
      throw new Error(dropFolderProblem(watchDir, dir, err as NodeJS.ErrnoException))
    }
  }
}

/** Why the drop folder cannot be used, as a sentence naming it (docs/operations.md: never bare errno text). */
function dropFolderProblem(watchDir: string, dir: string, err: NodeJS.ErrnoException): string {
  const why: Record<string, string> = {
    EACCES: 'this user may not create or change it',
    EPERM: 'this user may not create or change it',
    EROFS: 'it is on a read-only file system',
    ENOTDIR: 'a part of its path is a file, not a directory',
    EEXIST: 'a file of that name is in the way',
    ENOENT: 'a part of its path does not exist and cannot be created there',
    ENOSPC: 'the disk is full',
  }
  const reason = (err.code && why[err.code]) ?? err.message
  return `cannot use ${dir} as the drop folder${dir === watchDir ? '' : `'s ${dir.slice(watchDir.length + 1)}/ directory`}: ${reason}; set import.watchDir to a directory flagd may write (default <dataDir>/import)`
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })
// the endings the drop folder reads (docs/migrations.md#from-other-tools)
const SUFFIXES = ['.json', '.yaml', '.yml', '.toml'].map((s) => Buffer.from(s))
const suffixOf = (name: Buffer) => SUFFIXES.find((s) => name.subarray(name.length - s.length).equals(s))

/**
 * Drop files whose names are not valid UTF-8: under such a name a file cannot be opened through a
 * string path (the name decodes with replacement characters), so it would be skipped for ever.
 * Each is moved into `failed/` under a name made of its bytes in hex, beside a report that says why.
 * Answers the new names.
 */
export async function moveBadlyNamed(watchDir: string, at: Date): Promise<string[]> {
  const raw = await readdir(watchDir, { encoding: 'buffer' }).catch(() => [] as Buffer[])
  const moved: string[] = []
  for (const name of raw) {
    const suffix = suffixOf(name)
    if (name[0] === 0x2e || suffix === undefined) continue
    try {
      strictUtf8.decode(name)
      continue // a valid name: the scan handles it
    } catch {
      // not UTF-8: below
    }
    const target = `${utcStamp(at)}_name-not-utf8_${name.toString('hex').slice(0, 64)}${suffix.toString()}`
    const dir = join(watchDir, 'failed')
    await rename(Buffer.concat([Buffer.from(`${watchDir}/`), name]), join(dir, target))
    await chmod(join(dir, target), 0o600).catch(() => {})
    const report = {
      file: name.toString('latin1'),
      fileBytesHex: name.toString('hex'),
      at: at.toISOString(),
      error: { code: 'INVALID_REQUEST', message: 'the file name is not valid UTF-8; rename it and drop it again' },
    }
    await writeFileAtomic(join(dir, `${target}.error.json`), `${JSON.stringify(report, null, 2)}\n`)
    moved.push(target)
  }
  return moved
}

/** Why a dropped file was refused before it was read (it never is for these). */
export class RefusedFile extends Error {}

/**
 * Reads a dropped file without following links and without blocking: it is opened with O_NOFOLLOW
 * and O_NONBLOCK and checked on the open descriptor, so a file swapped for a symbolic link or a
 * FIFO between the scan and the read is refused, never followed or waited on. Throws `RefusedFile`
 * for those and for files over `maxBytes`.
 */
export async function readDroppedFile(path: string, maxBytes: number): Promise<Uint8Array> {
  let handle: FileHandle
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new RefusedFile('symbolic links are refused; drop the file itself')
    throw err
  }
  try {
    const info = await handle.stat()
    if (!info.isFile()) throw new RefusedFile('not a regular file')
    if (info.size > maxBytes) throw new RefusedFile(`the file is larger than ${maxBytes} bytes`)
    const bytes = new Uint8Array(info.size)
    const { bytesRead } = await handle.read(bytes, 0, info.size, 0)
    return bytes.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}

/** `name` cut to at most `maxBytes` of UTF-8, never inside a character. */
function truncateBytes(name: string, maxBytes: number): string {
  let out = ''
  let used = 0
  for (const ch of name) {
    const size = Buffer.byteLength(ch)
    if (used + size > maxBytes) break
    out += ch
    used += size
  }
  return out
}

/** The stamped name a dropped file is moved to, shortened (keeping its extension) to fit. */
export function movedName(name: string, at: Date): string {
  const base = `${utcStamp(at)}_${name}`
  if (Buffer.byteLength(base) <= NAME_MAX_BYTES - RESERVED_BYTES) return base
  const dot = base.lastIndexOf('.')
  const ext = dot > 0 && base.length - dot <= 16 ? base.slice(dot) : ''
  return `${truncateBytes(base.slice(0, base.length - ext.length), NAME_MAX_BYTES - RESERVED_BYTES - Buffer.byteLength(ext))}${ext}`
}

/**
 * Moves `name` into `<watchDir>/<outcome>/` under a stamped, unused name (the link itself for a
 * symbolic link), then writes `report` beside it as `<that name>.<suffix>`. Returns the new name.
 */
export async function moveWithReport(
  watchDir: string,
  name: string,
  outcome: 'processed' | 'failed',
  at: Date,
  suffix: string,
  report: unknown,
): Promise<string> {
  const dir = join(watchDir, outcome)
  const base = movedName(name, at)
  const dot = base.lastIndexOf('.')
  const [stem, ext] = dot > 0 ? [base.slice(0, dot), base.slice(dot)] : [base, '']
  let target = base
  for (let n = 2; (await exists(join(dir, target))) || (await exists(join(dir, `${target}.${suffix}`))); n++) target = `${stem}-${n}${ext}`
  await rename(join(watchDir, name), join(dir, target))
  const moved = await lstat(join(dir, target))
  if (!moved.isSymbolicLink()) await chmod(join(dir, target), 0o600)
  await writeFileAtomic(join(dir, `${target}.${suffix}`), `${JSON.stringify(report, null, 2)}\n`)
  return target
}
