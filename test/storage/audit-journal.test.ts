/** The audit journal: segments, cut-off on open, retention by whole segments, filters. */

import { afterEach, expect, test } from 'bun:test'
import { appendFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { StoredAuditEntry } from '../../src/domain/audit-entry.ts'
import { AuditJournal, linesFromEnd } from '../../src/storage/audit-journal.ts'
import { fileAuditLog } from '../../src/storage/file-audit-log.ts'
import { tempDir } from '../helpers/test-app.ts'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const entry = (id: number, at: string, name = 'f/a', flagId = 'flg_a'): StoredAuditEntry => ({
  entry: {
    id,
    at,
    actor: { type: 'system', id: 'cli', name: 'cli' },
    source: 'cli',
    requestId: 'r',
    action: 'flag.updated',
    target: { type: 'flag', name },
    revision: id,
    before: { name },
    after: { name, revision: id },
  },
  flagId,
})

async function journalWith(entries: StoredAuditEntry[], committed = Number.MAX_SAFE_INTEGER, segmentBytes?: number) {
  const dir = tempDir()
  dirs.push(dir)
  const j = await AuditJournal.open(dir, committed, undefined, segmentBytes)
  for (const e of entries) j.publish((await j.append([e])).items)
  await j.close()
  return dir
}

test('opening cuts off entries past the committed revision and a torn last line', async () => {
  const dir = await journalWith([
    entry(1, '2026-01-01T00:00:00.000Z'),
    entry(2, '2026-01-02T00:00:00.000Z'),
    entry(3, '2026-01-03T00:00:00.000Z'),
  ])
  const segment = readdirSync(join(dir, 'audit'))[0] as string
  appendFileSync(join(dir, 'audit', segment), '{"entry":{"id":4,')
  const told: string[] = []
  const j = await AuditJournal.open(dir, 2, (line) => told.push(line))
  expect(j.items.map((i) => i.id)).toEqual([1, 2])
  expect(told[0]).toContain("past the state's revision moved to audit/cut-off-")
  await j.close()
  const again = await AuditJournal.open(dir, 2)
  expect(again.items.map((i) => i.id)).toEqual([1, 2]) // the cut is durable
  await again.close()
})

test('retention hides old entries at once and deletes whole segments; filters and pages', async () => {
  const dir = await journalWith([
    entry(1, '2026-01-01T00:00:00.000Z', 'f/old'),
    entry(2, '2026-06-01T00:00:00.000Z', 'f/new', 'flg_b'),
    entry(3, '2026-11-01T00:00:00.000Z', 'f/new', 'flg_b'),
  ])
  const j = await AuditJournal.open(dir, 10)
  const now = Date.parse('2026-11-22T00:00:00.000Z')
  const log = fileAuditLog(
    j,
    () => 200 * 86_400_000,
    () => now,
  )
  expect((await log.query({ limit: 10 })).map((e) => e.id)).toEqual([3, 2]) // January is past 200 days
  expect((await log.query({ limit: 10, flagIds: ['flg_b'] })).map((e) => e.id)).toEqual([3, 2])
  expect((await log.query({ limit: 10, name: 'f/new', beforeId: 3 })).map((e) => e.id)).toEqual([2])
  expect((await log.query({ limit: 10, afterId: 1 })).map((e) => e.id)).toEqual([2, 3])
  expect(await log.flagRevision('flg_a', 1)).toBeUndefined() // past retention
  expect((await log.flagRevision('flg_b', 2))?.id).toBe(2)
  // the current segment is never deleted; everything here is in one segment
  expect(await log.prune(now - 200 * 86_400_000)).toBe(0)
  await j.close()
})

test('pruning deletes whole segments older than the cut-off, never the current one', async () => {
  const days = ['2026-01-01', '2026-02-01', '2026-03-01', '2026-11-01'].map((d) => `${d}T00:00:00.000Z`)
  const dir = await journalWith(
    days.map((at, i) => entry(i + 1, at)),
    Number.MAX_SAFE_INTEGER,
    100,
  ) // a segment per entry
  expect(readdirSync(join(dir, 'audit'))).toHaveLength(4)
  const j = await AuditJournal.open(dir, 10, undefined, 100)
  const log = fileAuditLog(
    j,
    () => 0,
    () => 0,
  )
  expect(await log.prune(Date.parse('2026-02-15T00:00:00.000Z'))).toBe(2)
  expect(readdirSync(join(dir, 'audit'))).toHaveLength(2)
  expect((await log.query({ limit: 10 })).map((e) => e.id)).toEqual([4, 3])
  expect(await log.prune(Date.parse('2027-01-01T00:00:00.000Z'))).toBe(1) // all but the current segment
  expect((await log.query({ limit: 10 })).map((e) => e.id)).toEqual([4])
  await j.close()
})

test('lines are read from the end in growing windows: each complete line once, newest first; a torn tail never', () => {
  const dir = tempDir()
  dirs.push(dir)
  const path = join(dir, 'lines.jsonl')
  const lines = Array.from({ length: 60 }, (_, i) => `line-${i}-${'x'.repeat((i * 7) % 23)}`)
  writeFileSync(path, `${lines.join('\n')}\n{"torn`)
  for (const window of [1, 5, 16, 64 * 1024]) {
    const read = [...linesFromEnd(path, window)]
    expect(read.map((l) => l.text)).toEqual([...lines].reverse())
    // each line's end is the offset just past its newline
    expect(read.at(-1)?.end).toBe(lines[0]!.length + 1)
  }
  writeFileSync(path, '')
  expect([...linesFromEnd(path, 4)]).toEqual([])
})

test('the history is indexed at the first question, not at open; entries published before that are in it once', async () => {
  const dir = await journalWith([entry(1, '2026-01-01T00:00:00.000Z'), entry(2, '2026-01-02T00:00:00.000Z')])
  const j = await AuditJournal.open(dir, 2)
  expect(j.indexed).toBe(false) // opening read only the newest line
  j.publish((await j.append([entry(3, '2026-01-03T00:00:00.000Z')])).items)
  // an append not yet published (its state file not written) is on disk but not in the index
  await j.append([entry(4, '2026-01-04T00:00:00.000Z')])
  expect(j.items.map((i) => i.id)).toEqual([1, 2, 3])
  expect(j.indexed).toBe(true)
  j.publish((await j.append([entry(5, '2026-01-05T00:00:00.000Z')])).items)
  expect(j.items.map((i) => i.id)).toEqual([1, 2, 3, 5])
  await j.close()
})

test('crash after two appends into two segments: both uncommitted tails are cut, the committed lines before stay', async () => {
  const dir = await journalWith(
    [entry(1, '2026-01-01T00:00:00.000Z'), entry(2, '2026-01-02T00:00:00.000Z'), entry(3, '2026-01-03T00:00:00.000Z')],
    Number.MAX_SAFE_INTEGER,
    600, // a segment per entry or two
  )
  const told: string[] = []
  const j = await AuditJournal.open(dir, 1, (line) => told.push(line), 600)
  expect(j.items.map((i) => i.id)).toEqual([1])
  expect(told.length).toBeGreaterThanOrEqual(1)
  j.publish((await j.append([entry(2, '2026-01-06T00:00:00.000Z')])).items)
  await j.close()
  const again = await AuditJournal.open(dir, 2, undefined, 600)
  expect(again.items.map((i) => i.id)).toEqual([1, 2])
  await again.close()
})

test('pruning judges each segment by its newest line and never needs the index', async () => {
  const dir = await journalWith(
    [entry(1, '2026-01-01T00:00:00.000Z'), entry(2, '2026-01-02T00:00:00.000Z'), entry(3, '2026-03-01T00:00:00.000Z')],
    Number.MAX_SAFE_INTEGER,
    300,
  )
  const j = await AuditJournal.open(dir, 3, undefined, 300)
  const segments = readdirSync(join(dir, 'audit')).length
  expect(segments).toBeGreaterThanOrEqual(2)
  const removed = j.prune(Date.parse('2026-02-01T00:00:00.000Z'))
  expect(j.indexed).toBe(false)
  expect(removed).toBeGreaterThanOrEqual(1)
  expect(j.items.every((i) => i.atMs >= Date.parse('2026-01-01T00:00:00.000Z'))).toBe(true)
  expect(j.items.at(-1)?.id).toBe(3)
  await j.close()
})
