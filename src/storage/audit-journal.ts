/**
 * The audit log of the file store (docs/api.md#audit-log): an append-only journal of JSON lines in
 * `<dataDir>/audit/`, in segment files named after their first entry id. It lives beside the state
 * file instead of inside it, so a commit appends a few lines instead of rewriting the whole history.
 *
 * Ordering with the state file makes state and log agree after a crash at any moment: a group commit
 * appends and fsyncs its entries first, then replaces the state file. A crash in between leaves
 * entries beyond the state's revision; opening the journal cuts them off (and any torn last line),
 * so no entry describes a change that was not applied, and every applied change has its entry.
 * Retention deletes whole segments, which costs the write path nothing.
 *
 * In memory there is only an index (id, time, filters' keys, where the line is); entries are read
 * from disk when asked for. The index of the history is built at the first question asked of it
 * (a query, a rollback, a copy), not at start: opening reads only the newest lines, so start-up time
 * and idle memory do not grow with the audit history (docs/operations.md#audit-log). Once built,
 * entries committed after are indexed as they are published; before, only the id they reach is
 * kept, and the build reads them from disk with the rest (an import of 10,000 flags no longer keeps
 * 10,000 index items that nobody asked for).
 */

import { randomUUID } from 'node:crypto'
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import { join } from 'node:path'
import type { AuditEntry, StoredAuditEntry } from '../domain/audit-entry.ts'
import { fsyncDirectory } from '../io/atomic-write.ts'

/** What the index knows of one entry. */
export interface IndexItem {
  id: number
  atMs: number
  segment: string
  offset: number
  length: number
  flagId: string | undefined
  actorId: string
  action: string
  /** The target's name after the change, and the flag's name before it (renames). */
  names: string[]
  revision: number | undefined
  /** Flag entries: the environment whose state moved (docs/environments.md#audit). */
  environment: string | undefined
}

const SEGMENT_BYTES = 16 * 1024 * 1024
const segmentName = (firstId: number) => `audit-${String(firstId).padStart(16, '0')}.jsonl`

/** One journal line, or `undefined` when it is not a whole entry (a torn line). */
function parseLine(line: string): StoredAuditEntry | undefined {
  try {
    const stored = JSON.parse(line) as StoredAuditEntry
    return stored?.entry ? stored : undefined
  } catch {
    return undefined
  }
}

/**
 * One copy of each short text the index repeats (actions, actors, environments): each entry parsed
 * from a line had its own copy, 11,000 of `flag.created` after an import (docs/performance.md).
 */
const texts = new Map<string, string>()
function shared<T extends string | undefined>(text: T): T {
  if (text === undefined || text.length > 64) return text
  const known = texts.get(text)
  if (known !== undefined) return known as T
  if (texts.size < 10_000) texts.set(text, text)
  return text
}

function indexItem(stored: StoredAuditEntry, segment: string, offset: number, length: number): IndexItem {
  const e = stored.entry
  const names = [e.target.name, e.before?.name].filter((n): n is string => typeof n === 'string')
  return {
    id: e.id,
    atMs: Date.parse(e.at),
    segment,
    offset,
    length,
    flagId: stored.flagId,
    actorId: shared(e.actor.id),
    action: shared(e.action),
    names,
    revision: e.revision,
    environment: shared(e.environment ?? undefined),
  }
}

/**
 * The complete lines at the end of a segment, newest first, read backwards in growing windows so
 * that only the tail is read when the answer is near the end (as it is at every open).
 */
export function* linesFromEnd(path: string, firstWindow = 64 * 1024): Generator<{ end: number; text: string }> {
  const fd = openSync(path, 'r')
  try {
    const size = fstatSync(fd).size
    let window = firstWindow
    let seenFrom = size // lines ending at or after this offset were yielded already
    for (;;) {
      const from = Math.max(0, size - window)
      const bytes = Buffer.allocUnsafe(size - from)
      readSync(fd, bytes, 0, bytes.length, from)
      // complete lines end with a newline; the bytes before the window's first newline may be a
      // line's end whose start lies before the window, unless the window starts the file
      let lineEnd = bytes.lastIndexOf(10)
      while (lineEnd !== -1) {
        const startAt = bytes.lastIndexOf(10, lineEnd - 1)
        if (startAt === -1 && from > 0) break
        const end = from + lineEnd + 1
        if (end <= seenFrom) yield { end, text: bytes.subarray(startAt + 1, lineEnd).toString('utf8') }
        lineEnd = startAt
      }
      if (from === 0) return
      // the line ending at `lineEnd` started before the window: the next, larger window yields it
      if (lineEnd !== -1) seenFrom = from + lineEnd + 1
      window *= 4
    }
  } finally {
    closeSync(fd)
  }
}

/** How many bytes of a segment hold committed entries: up to the newest whole line of an id ≤ `committed`. */
function committedPrefix(path: string, committed: number): number {
  for (const line of linesFromEnd(path)) {
    const stored = parseLine(line.text)
    if (stored && stored.entry.id <= committed) return line.end
  }
  return 0
}

/** The newest whole entry of a segment, if any. */
function newestEntry(path: string): StoredAuditEntry | undefined {
  for (const line of linesFromEnd(path)) {
    const stored = parseLine(line.text)
    if (stored) return stored
  }
  return undefined
}

/** The journal (see module comment). */
export class AuditJournal {
  private index: IndexItem[] | undefined
  private handle: FileHandle | undefined
  private current: string | undefined
  private size = 0

  private constructor(
    readonly dir: string,
    private readonly segmentBytes: number,
    /** Entries up to this id are committed (at opening, then as batches are published): the index is built of them. */
    private publishedThrough: number,
  ) {}

  /**
   * Opens the journal in `dataDir`, cutting off entries past `committedRevision` and a torn tail.
   * Only the newest lines are read (see module comment). `segmentBytes` (16 MiB) is where a new
   * segment starts; tests make it small.
   */
  static async open(
    dataDir: string,
    committedRevision: number,
    log?: (line: string) => void,
    segmentBytes = SEGMENT_BYTES,
  ): Promise<AuditJournal> {
    const journal = new AuditJournal(join(dataDir, 'audit'), segmentBytes, committedRevision)
    if (!existsSync(journal.dir)) mkdirSync(journal.dir, { mode: 0o700 })
    const segments = journal.segments()
    // newest first: lines past the committed revision (a crash between the log and the state file)
    // and a torn last line sit at the end of the newest one or two segments
    for (let i = segments.length - 1; i >= 0; i--) {
      const segment = segments[i] as string
      const keep = committedPrefix(join(journal.dir, segment), committedRevision)
      const size = statSync(join(journal.dir, segment)).size
      if (keep < size) {
        // kept aside, not deleted: after a crash they were never committed, but after a backup was
        // put back they are the history since it (docs/operations.md#backups)
        const aside = `cut-off-${segment.replace(/\.jsonl$/, '')}-${randomUUID().slice(0, 8)}.jsonl`
        const fd = openSync(join(journal.dir, segment), 'r+')
        try {
          const bytes = Buffer.allocUnsafe(size - keep)
          readSync(fd, bytes, 0, bytes.length, keep)
          writeFileSync(join(journal.dir, aside), bytes, { mode: 0o600, flush: true })
        } finally {
          closeSync(fd)
        }
        log?.(
          `audit log ${segment}: ${size - keep} bytes of entries past the state's revision moved to audit/${aside} (after a crash: changes never committed; after restoring a backup: the history since it)`,
        )
        const fd2 = openSync(join(journal.dir, segment), 'r+')
        try {
          ftruncateSync(fd2, keep)
          fsyncSync(fd2)
        } finally {
          closeSync(fd2)
        }
      }
      if (keep > 0) break // a committed line: everything before it is committed too
    }
    const last = segments.at(-1)
    if (last) {
      journal.current = last
      journal.size = statSync(join(journal.dir, last)).size
    }
    return journal
  }

  /** The segment files, oldest first. */
  private segments(): string[] {
    return readdirSync(this.dir)
      .filter((n) => /^audit-\d{16}\.jsonl$/.test(n))
      .sort()
  }

  /** Whether the index of the history has been built (tests: opening must not build it). */
  get indexed(): boolean {
    return this.index !== undefined
  }

  /** Every committed entry's index item, oldest first (built from disk at the first use). */
  get items(): readonly IndexItem[] {
    if (this.index === undefined) {
      const built: IndexItem[] = []
      for (const segment of this.segments()) {
        const bytes = readFileSync(join(this.dir, segment))
        let offset = 0
        while (offset < bytes.length) {
          const end = bytes.indexOf(10, offset)
          if (end === -1) break
          const stored = parseLine(bytes.subarray(offset, end).toString('utf8'))
          if (stored && stored.entry.id <= this.publishedThrough) built.push(indexItem(stored, segment, offset, end - offset))
          offset = end + 1
        }
      }
      this.index = built
    }
    return this.index
  }

  /**
   * Appends `entries` durably and returns their index items; they become visible with `publish`, once
   * the state file holding their changes is written too. On failure the caller calls `discard`.
   * `texts`: each entry's JSON when the caller has made it already (the file store writes the same
   * text to its change journal, docs/performance.md#imports).
   */
  async append(
    entries: readonly StoredAuditEntry[],
    durable = true,
    texts?: readonly string[],
  ): Promise<{ items: IndexItem[]; mark: { segment: string; size: number } }> {
    const first = entries[0]
    if (!first) throw new Error('nothing to append')
    if (!this.handle || this.size >= this.segmentBytes) await this.roll(first.entry.id)
    const mark = { segment: this.current as string, size: this.size }
    const items: IndexItem[] = []
    const lines: string[] = []
    let offset = this.size
    for (const [i, stored] of entries.entries()) {
      const line = texts?.[i] ?? JSON.stringify(stored)
      const length = Buffer.byteLength(line)
      items.push(indexItem(stored, this.current as string, offset, length))
      lines.push(line)
      offset += length + 1
    }
    const text = `${lines.join('\n')}\n`
    const handle = this.handle as FileHandle
    await handle.write(text)
    this.size = offset
    if (durable) await handle.datasync()
    return { items, mark }
  }

  /**
   * Makes every entry appended so far durable. The file store appends without it (its change
   * journal carries the entries too) and calls this before a checkpoint lets that journal go.
   */
  async sync(): Promise<void> {
    const handle = this.handle
    try {
      await handle?.datasync()
    } catch (err) {
      if (handle === this.handle) throw err // else a roll closed it, after syncing it
    }
  }

  /**
   * Appends, durably, the entries of `entries` newer than the newest whole entry on disk: opening the
   * file store hands over those of the changes it replayed, which a crash may have kept from the
   * journal (the change journal is the record). Answers how many it appended.
   */
  async repair(entries: readonly StoredAuditEntry[]): Promise<number> {
    let newest = 0
    for (const segment of this.segments().reverse()) {
      const stored = newestEntry(join(this.dir, segment))
      if (stored) {
        newest = stored.entry.id
        break
      }
    }
    const missing = entries.filter((stored) => stored.entry.id > newest)
    if (missing.length > 0) await this.append(missing)
    return missing.length
  }

  /** Makes appended entries visible to readers (their changes are committed). */
  publish(items: readonly IndexItem[]): void {
    if (this.index !== undefined) this.index.push(...items)
    else this.publishedThrough = Math.max(this.publishedThrough, items.at(-1)?.id ?? 0) // read from disk when the index is built
  }

  /** Cuts the journal back to `mark` after the state write that followed an append failed. */
  async discard(mark: { segment: string; size: number }): Promise<void> {
    if (mark.segment !== this.current || !this.handle) return
    await this.handle.truncate(mark.size)
    await this.handle.datasync()
    this.size = mark.size
  }

  /**
   * Reads the entries of `items` from disk without blocking the event loop: a page of large entries
   * is read with asynchronous reads, one entry at a time, so requests go on being answered meanwhile.
   */
  async read(items: readonly IndexItem[]): Promise<AuditEntry[]> {
    const handles = new Map<string, FileHandle>()
    try {
      const out: AuditEntry[] = []
      for (const item of items) {
        let handle = handles.get(item.segment)
        if (handle === undefined) handles.set(item.segment, (handle = await open(join(this.dir, item.segment), 'r')))
        const buffer = Buffer.allocUnsafe(item.length)
        await handle.read(buffer, 0, item.length, item.offset)
        out.push((JSON.parse(buffer.toString('utf8')) as StoredAuditEntry).entry)
      }
      return out
    } finally {
      for (const handle of handles.values()) await handle.close().catch(() => {})
    }
  }

  /** The entries of `items` as stored (with the flag id that follows renames). */
  readStored(items: readonly IndexItem[]): StoredAuditEntry[] {
    const fds = new Map<string, number>()
    try {
      return items.map((item) => {
        let fd = fds.get(item.segment)
        if (fd === undefined) fds.set(item.segment, (fd = openSync(join(this.dir, item.segment), 'r')))
        const buffer = Buffer.allocUnsafe(item.length)
        readSync(fd, buffer, 0, item.length, item.offset)
        return JSON.parse(buffer.toString('utf8')) as StoredAuditEntry
      })
    } finally {
      for (const fd of fds.values()) closeSync(fd)
    }
  }

  /**
   * Deletes whole segments whose every entry is older than `cutoffMs` (judged by each segment's
   * newest line, so pruning never builds the index); returns how many entries went.
   */
  prune(cutoffMs: number): number {
    let removed = 0
    for (const segment of this.segments()) {
      if (segment === this.current) break
      const path = join(this.dir, segment)
      const newest = newestEntry(path)
      if (newest !== undefined && Date.parse(newest.entry.at) >= cutoffMs) break
      const bytes = readFileSync(path)
      let lines = 0
      for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) lines++
      rmSync(path, { force: true })
      removed += lines
      if (this.index !== undefined) this.index = this.index.filter((item) => item.segment !== segment)
    }
    return removed
  }

  async close(): Promise<void> {
    await this.handle?.close()
    this.handle = undefined
  }

  private async roll(firstId: number): Promise<void> {
    const name = this.current && this.size < this.segmentBytes ? this.current : segmentName(firstId)
    await this.handle?.datasync() // a segment left behind holds only durable entries
    await this.handle?.close()
    this.handle = await open(join(this.dir, name), 'a', 0o600)
    if (name !== this.current) {
      this.current = name
      this.size = 0
      await fsyncDirectory(this.dir)
    }
  }
}
