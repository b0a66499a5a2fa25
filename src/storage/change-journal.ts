/**
 * The change journal of the file store (docs/operations.md#durability, decision record 0009): the
 * record of every commit the state file does not hold yet. A group commit appends one line (the rows
 * it changed, whole; the last-use times it saves; its audit entries) and fdatasyncs it: that is the
 * commit's durable point, so a write costs what it changes, whatever the store holds. A checkpoint
 * (`state-checkpoint.ts`) rewrites the state file in the background; the segments it covers are then
 * deleted. Opening replays the lines past the state file's revision (`replayJournal`).
 *
 * Segments are `changes/changes-<n>.jsonl`, numbered in the order they were started. A checkpoint
 * starts a new segment before it snapshots the state, so every older segment is covered once the
 * new state file is in place and can go whole; appending after opening starts one too, so a torn
 * line can only ever be the last bytes of the newest segment.
 */

import { closeSync, existsSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs'
import { type FileHandle, open, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { StoredAuditEntry } from '../domain/audit-entry.ts'
import { fsyncDirectory } from '../io/atomic-write.ts'
import { writeAll } from '../io/write-all.ts'
import { CorruptStateError } from './corrupt-state-error.ts'
import { parseJournalLine } from './journal-line.ts'
import type { Rows, Table, UsageTable } from './store.ts'

/** One changed row: its change number, table, id and the row after (`null`: deleted). */
export type JournalChange = [seq: number, table: Table, id: string, row: Rows[Table] | null]
/** One last-use time saved: table, row id, time. */
export type JournalUse = [table: UsageTable, id: string, at: string]

/** One group commit as the journal records it. */
export interface JournalBatch {
  /** The identity of the store the line belongs to (its state file's `storeId`). */
  store?: string
  /** The revision before the batch and after it (equal when it only saves last-use times). */
  from: number
  to: number
  at: string
  changes: JournalChange[]
  uses: JournalUse[]
  audit: StoredAuditEntry[]
}

/** Called before every write to the data directory; a test's full disk throws from it. */
export type DiskFaults = (path: string) => void | Promise<void>

/** Where an append began, to take it back. */
export interface JournalMark {
  segment: string
  size: number
}

interface Segment {
  name: string
  /** The highest revision a line of it reaches. */
  newest: number
}

const DIR = 'changes'
const segmentName = (n: number) => `changes-${String(n).padStart(10, '0')}.jsonl`
const SEGMENT = /^changes-(\d{10})\.jsonl$/

/** The journal's directory in a data directory. */
export function changeJournalDir(dataDir: string): string {
  return join(dataDir, DIR)
}

/** A journal read at opening: its batches in order and the segments holding them. */
export interface ReadJournal {
  batches: JournalBatch[]
  segments: Segment[]
}

/**
 * Reads every segment of the journal in `dataDir`, oldest first. A torn last line of the newest
 * segment (a crash in the middle of an append that was never acknowledged) is cut off and logged
 * (left alone when `cut` is false: reading without opening); a bad line anywhere else throws
 * `CorruptStateError`, since lines after it were acknowledged.
 */
export function readChangeJournal(dataDir: string, log?: (line: string) => void, cut = true): ReadJournal {
  const dir = changeJournalDir(dataDir)
  if (!existsSync(dir)) return { batches: [], segments: [] }
  const names = readdirSync(dir)
    .filter((n) => SEGMENT.test(n))
    .sort()
  const batches: JournalBatch[] = []
  const segments: Segment[] = []
  for (const [i, name] of names.entries()) {
    const path = join(dir, name)
    const bytes = readFileSync(path)
    const last = i === names.length - 1
    let offset = 0
    let newest = Number.NEGATIVE_INFINITY
    while (offset < bytes.length) {
      const end = bytes.indexOf(10, offset)
      const batch = end === -1 ? undefined : parseJournalLine(path, bytes.subarray(offset, end).toString('utf8'))
      if (batch === undefined) {
        // torn: only the newest segment's tail may be, and nothing whole may follow it
        if (!last || hasWholeLine(path, bytes, end === -1 ? bytes.length : end + 1))
          throw new CorruptStateError(path, `the line at byte ${offset} is damaged and acknowledged changes follow it`, 'change journal')
        if (cut) {
          log?.(
            `change journal ${name}: cut off ${bytes.length - offset} bytes of a write that was never acknowledged (a crash while appending)`,
          )
          truncate(path, offset)
        }
        break
      }
      batches.push(batch)
      newest = Math.max(newest, batch.to)
      offset = end + 1
    }
    segments.push({ name, newest })
  }
  return { batches, segments }
}

/** Whether a whole, valid line starts at or after `from` (a torn line may not be followed by one). */
function hasWholeLine(path: string, bytes: Buffer, from: number): boolean {
  for (let offset = from; offset < bytes.length; ) {
    const end = bytes.indexOf(10, offset)
    if (end === -1) return false
    if (parseJournalLine(path, bytes.subarray(offset, end).toString('utf8')) !== undefined) return true
    offset = end + 1
  }
  return false
}

function truncate(path: string, size: number): void {
  const fd = openSync(path, 'r+')
  try {
    ftruncateSync(fd, size)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

const CHUNK = 256 * 1024

/**
 * The JSON texts a line is made of, when the caller has made them already (the file store makes each
 * row's and audit entry's once per commit, docs/performance.md#imports): `row` of a changed row,
 * `audit` of the batch's audit entries, in order. Absent: `JSON.stringify`.
 */
export interface LineTexts {
  row(row: object): string
  audit: readonly string[]
}

/**
 * The line of `batch` (`JSON.stringify(batch)` and a newline) in chunks of about 256 KB, so that an
 * import of many flags never builds its whole line, or its bytes, at once; `texts` gives the rows'
 * and audit entries' texts when they are made already (the line is the same).
 */
export function* lineChunks(batch: JournalBatch, texts?: LineTexts): Generator<string> {
  const store = batch.store === undefined ? '' : `"store":${JSON.stringify(batch.store)},`
  let text = `{${store}"from":${batch.from},"to":${batch.to},"at":${JSON.stringify(batch.at)},"changes":[`
  for (const [i, change] of batch.changes.entries()) {
    const [seq, table, id, row] = change
    text +=
      texts === undefined
        ? `${i > 0 ? ',' : ''}${JSON.stringify(change)}`
        : `${i > 0 ? ',' : ''}[${seq},${JSON.stringify(table)},${JSON.stringify(id)},${row === null ? 'null' : texts.row(row)}]`
    if (text.length >= CHUNK) {
      yield text
      text = ''
    }
  }
  text += `],"uses":${JSON.stringify(batch.uses)},"audit":[`
  for (const [i, entry] of batch.audit.entries()) {
    text += `${i > 0 ? ',' : ''}${texts?.audit[i] ?? JSON.stringify(entry)}`
    if (text.length >= CHUNK) {
      yield text
      text = ''
    }
  }
  yield `${text}]}\n`
}

/** The journal being appended to (see module comment). */
export class ChangeJournal {
  private handle: FileHandle | undefined
  /** The segment `handle` appends to. */
  private handleSegment: string | undefined
  private size = 0
  private startNew = true
  private next: number
  /** Bytes appended since the last `roll` (what a checkpoint would cover). */
  bytesSinceRoll = 0

  private constructor(
    readonly dir: string,
    private readonly segments: Segment[],
    private readonly faults: DiskFaults | undefined,
  ) {
    const numbers = segments.map((s) => Number(SEGMENT.exec(s.name)?.[1] ?? 0))
    this.next = Math.max(0, ...numbers) + 1
  }

  /** The journal of `dataDir` for appending, after `readChangeJournal` found `segments` there. */
  static open(dataDir: string, segments: Segment[], faults?: DiskFaults): ChangeJournal {
    const dir = changeJournalDir(dataDir)
    if (!existsSync(dir)) mkdirSync(dir, { mode: 0o700 })
    return new ChangeJournal(dir, [...segments], faults)
  }

  /** Appends `batch` as one line (made of `texts`, see `lineChunks`) and makes it durable; on failure the caller calls `discard`. */
  async append(batch: JournalBatch, texts?: LineTexts): Promise<JournalMark> {
    if (this.startNew || this.handle === undefined) await this.startSegment()
    const segment = this.segments.at(-1) as Segment
    const mark = { segment: segment.name, size: this.size }
    // before the write: a checkpoint must never take this segment for covered while the line is on its way
    segment.newest = Math.max(segment.newest, batch.to)
    await this.faults?.(join(this.dir, segment.name))
    let bytes = 0
    for (const chunk of lineChunks(batch, texts)) bytes += await writeAll(this.handle as FileHandle, chunk)
    this.size += bytes
    this.bytesSinceRoll += bytes
    await (this.handle as FileHandle).datasync()
    return mark
  }

  /** Cuts the journal back to `mark` (an append, or the batches behind a failed one, are taken back). */
  async discard(mark: JournalMark): Promise<void> {
    const segment = this.segments.at(-1)
    if (!this.handle || segment?.name !== mark.segment) return
    await this.handle.truncate(mark.size)
    await this.handle.datasync()
    this.size = mark.size
  }

  /** The next append starts a new segment: what is written until then is what a checkpoint covers. */
  roll(): void {
    this.startNew = true
    this.bytesSinceRoll = 0
  }

  /**
   * Deletes the oldest segments while the state file at `revision` holds all their lines; the one
   * being appended to stays unless `roll` ended it (its next append starts a new one).
   */
  async dropThrough(revision: number): Promise<void> {
    while (this.segments.length > 0 && (this.segments[0] as Segment).newest <= revision) {
      if (this.segments.length === 1 && !this.startNew) return
      const [gone] = this.segments.splice(0, 1)
      // the handle of the segment going, unless an append has started a new one meanwhile
      if (this.handle !== undefined && this.handleSegment === (gone as Segment).name) {
        const handle = this.handle
        this.handle = undefined
        this.handleSegment = undefined
        await handle.close().catch(() => {})
      }
      await rm(join(this.dir, (gone as Segment).name), { force: true })
    }
  }

  async close(): Promise<void> {
    const handle = this.handle
    this.handle = undefined
    this.handleSegment = undefined
    await handle?.close()
  }

  private async startSegment(): Promise<void> {
    const name = segmentName(this.next++)
    await this.faults?.(join(this.dir, name))
    const handle = await open(join(this.dir, name), 'ax', 0o600) // appends land at the end, after a discard too
    await fsyncDirectory(this.dir) // the segment must survive a power cut before its lines count
    const previous = this.handle
    this.handle = handle
    this.handleSegment = name
    this.size = 0
    this.startNew = false
    this.segments.push({ name, newest: Number.NEGATIVE_INFINITY })
    await previous?.close().catch(() => {})
  }
}
