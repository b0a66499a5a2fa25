/**
 * The audit log of the file store (contract §15): an append-only journal of JSON lines in
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
 * from disk when asked for.
 */

import {
  closeSync,
  existsSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
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
}

const SEGMENT_BYTES = 16 * 1024 * 1024
const segmentName = (firstId: number) => `audit-${String(firstId).padStart(16, '0')}.jsonl`

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
    actorId: e.actor.id,
    action: e.action,
    names,
    revision: e.revision,
  }
}

/** The journal (see module comment). */
export class AuditJournal {
  /** Every entry's index item, oldest first. */
  readonly items: IndexItem[] = []
  private handle: FileHandle | undefined
  private current: string | undefined
  private size = 0

  private constructor(
    readonly dir: string,
    private readonly segmentBytes: number,
  ) {}

  /**
   * Opens the journal in `dataDir`, cutting off entries past `committedRevision` and a torn tail.
   * `segmentBytes` (16 MiB) is where a new segment starts; tests make it small.
   */
  static async open(
    dataDir: string,
    committedRevision: number,
    log?: (line: string) => void,
    segmentBytes = SEGMENT_BYTES,
  ): Promise<AuditJournal> {
    const journal = new AuditJournal(join(dataDir, 'audit'), segmentBytes)
    if (!existsSync(journal.dir)) mkdirSync(journal.dir, { mode: 0o700 })
    const segments = readdirSync(journal.dir)
      .filter((n) => /^audit-\d{16}\.jsonl$/.test(n))
      .sort()
    for (const segment of segments) {
      const path = join(journal.dir, segment)
      const bytes = readFileSync(path)
      let offset = 0
      let keep = 0
      while (offset < bytes.length) {
        const end = bytes.indexOf(10, offset)
        if (end === -1) break // a torn last line: never acknowledged
        let stored: StoredAuditEntry | undefined
        try {
          stored = JSON.parse(bytes.subarray(offset, end).toString('utf8')) as StoredAuditEntry
        } catch {
          stored = undefined
        }
        if (!stored?.entry || stored.entry.id > committedRevision) break // not part of the committed state
        journal.items.push(indexItem(stored, segment, offset, end - offset))
        offset = end + 1
        keep = offset
      }
      if (keep < bytes.length) {
        log?.(
          `audit log ${segment}: cut off ${bytes.length - keep} bytes written past the last committed change (a crash between the log and the state file)`,
        )
        const fd = openSync(path, 'r+')
        try {
          ftruncateSync(fd, keep)
          fsyncSync(fd)
        } finally {
          closeSync(fd)
        }
      }
    }
    const last = segments.at(-1)
    if (last) {
      journal.current = last
      journal.size = statSync(join(journal.dir, last)).size
    }
    return journal
  }

  /**
   * Appends `entries` durably and returns their index items; they become visible with `publish`, once
   * the state file holding their changes is written too. On failure the caller calls `discard`.
   */
  async append(entries: readonly StoredAuditEntry[]): Promise<{ items: IndexItem[]; mark: { segment: string; size: number } }> {
    const first = entries[0]
    if (!first) throw new Error('nothing to append')
    if (!this.handle || this.size >= this.segmentBytes) await this.roll(first.entry.id)
    const mark = { segment: this.current as string, size: this.size }
    const items: IndexItem[] = []
    const lines: string[] = []
    let offset = this.size
    for (const stored of entries) {
      const line = JSON.stringify(stored)
      const length = Buffer.byteLength(line)
      items.push(indexItem(stored, this.current as string, offset, length))
      lines.push(line)
      offset += length + 1
    }
    const text = `${lines.join('\n')}\n`
    const handle = this.handle as FileHandle
    await handle.write(text)
    this.size = offset
    await handle.datasync()
    return { items, mark }
  }

  /** Makes appended entries visible to readers (their changes are committed). */
  publish(items: readonly IndexItem[]): void {
    this.items.push(...items)
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

  /** Deletes whole segments whose every entry is older than `cutoffMs`; returns how many entries went. */
  prune(cutoffMs: number): number {
    let removed = 0
    while (this.items.length > 0) {
      const segment = (this.items[0] as IndexItem).segment
      if (segment === this.current) break
      const inSegment = this.items.findIndex((i) => i.segment !== segment)
      const count = inSegment === -1 ? this.items.length : inSegment
      if ((this.items[count - 1] as IndexItem).atMs >= cutoffMs) break
      rmSync(join(this.dir, segment), { force: true })
      this.items.splice(0, count)
      removed += count
    }
    return removed
  }

  async close(): Promise<void> {
    await this.handle?.close()
    this.handle = undefined
  }

  private async roll(firstId: number): Promise<void> {
    const name = this.current && this.size < this.segmentBytes ? this.current : segmentName(firstId)
    await this.handle?.close()
    this.handle = await open(join(this.dir, name), 'a', 0o600)
    if (name !== this.current) {
      this.current = name
      this.size = 0
      await fsyncDirectory(this.dir)
    }
  }
}
