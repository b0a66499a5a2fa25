/**
 * The change journal read back (docs/operations.md#durability): a line written in chunks is the
 * batch's JSON; a torn last line is cut off (and left alone when only reading); damage followed by
 * acknowledged lines, or a journal that does not continue the state file, stops opening with a
 * sentence; lines the state file already holds are skipped; a clean stop during a checkpoint leaves
 * nothing behind; audit entries past a restored backup are kept aside.
 */

import { afterEach, expect, test } from 'bun:test'
import { appendFileSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { systemPrincipal } from '../../src/domain/principal.ts'
import { type JournalBatch, lineChunks, readChangeJournal } from '../../src/storage/change-journal.ts'
import { openJsonFileStore } from '../../src/storage/json-file-store.ts'
import { systemClock } from '../../src/system-clock.ts'
import { sampleFlag } from '../helpers/sample-flag.ts'
import { readStateFileOnly } from '../helpers/state-file.ts'
import { tempDir } from '../helpers/test-app.ts'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const meta = { principal: systemPrincipal('cli'), source: 'cli' as const, requestId: 'journal' }

/** A data directory whose journal holds `n` flags written (the state file holds none of them). */
async function journalOf(n: number): Promise<string> {
  const dir = tempDir()
  dirs.push(dir)
  const store = await openJsonFileStore({ now: systemClock, dataDir: dir, checkpoints: { afterMs: 0 } })
  for (let i = 0; i < n; i++) await store.transact(meta, (tx) => tx.put('flags', sampleFlag(`f${i}`)))
  // a crash now: files closed and the lock released without the closing checkpoint
  const inside = store as unknown as { lock: { release(): void }; changes: { close(): Promise<void> }; journal: { close(): Promise<void> } }
  await inside.changes.close()
  await inside.journal.close()
  inside.lock.release()
  return dir
}
const segmentOf = (dir: string) => join(dir, 'changes', readdirSync(join(dir, 'changes')).sort().at(-1) as string)

test('a line written in chunks is the JSON of its batch, however large', () => {
  const changes = Array.from({ length: 3000 }, (_, i) => [i + 1, 'flags', `flg_f${i}`, sampleFlag(`f${i}`)]) as JournalBatch['changes']
  const batch: JournalBatch = {
    from: 0,
    to: 3000,
    at: '2026-12-07T10:00:00.000Z',
    changes,
    uses: [['tokens', 't1', '2026-12-07T10:00:00.000Z']],
    audit: [],
  }
  const chunks = [...lineChunks(batch)]
  expect(chunks.length).toBeGreaterThan(1)
  expect(chunks.join('')).toBe(`${JSON.stringify(batch)}\n`)
  // the same line from texts made already (the file store's, made once per commit)
  expect([...lineChunks(batch, { row: (row) => JSON.stringify(row), audit: [] })].join('')).toBe(`${JSON.stringify(batch)}\n`)
})

test('a torn last line is cut off at opening, and left alone when only reading', async () => {
  const dir = await journalOf(3)
  const segment = segmentOf(dir)
  const whole = readFileSync(segment, 'utf8')
  appendFileSync(segment, '{"from":3,"to":4,"at":"2026-12')
  expect(readChangeJournal(dir, undefined, false).batches.length).toBe(3)
  expect(readFileSync(segment, 'utf8')).not.toBe(whole)
  const logged: string[] = []
  const store = await openJsonFileStore({ now: systemClock, dataDir: dir, log: (line) => logged.push(line) })
  expect([...store.committed().flags.keys()]).toEqual(['f0', 'f1', 'f2'])
  expect(logged.join('\n')).toContain('cut off 30 bytes of a write that was never acknowledged')
  await store.close()
})

test('damage followed by acknowledged lines stops opening, naming the journal; nothing is changed', async () => {
  const dir = await journalOf(3)
  const segment = segmentOf(dir)
  const lines = readFileSync(segment, 'utf8').split('\n')
  lines[1] = `${(lines[1] as string).slice(0, 20)}#`
  writeFileSync(segment, lines.join('\n'))
  const before = readFileSync(segment, 'utf8')
  await expect(openJsonFileStore({ now: systemClock, dataDir: dir })).rejects.toThrow(
    /change journal .* cannot be used: the line at byte \d+ is damaged/,
  )
  expect(readFileSync(segment, 'utf8')).toBe(before)
})

test('a journal that does not continue the state file stops opening and says what to do', async () => {
  const dir = await journalOf(3)
  const segment = segmentOf(dir)
  const lines = readFileSync(segment, 'utf8').split('\n').filter(Boolean)
  writeFileSync(segment, `${lines.slice(1).join('\n')}\n`) // the first change is missing
  await expect(openJsonFileStore({ now: systemClock, dataDir: dir })).rejects.toThrow(
    /continue from revision 1 but the state file is at revision 0\. If the state file was restored from a backup, move the journal away/,
  )
})

test('lines the state file already holds are skipped (a crash after a checkpoint, before its segments went)', async () => {
  const dir = await journalOf(2)
  const segment = segmentOf(dir)
  const kept = readFileSync(segment)
  const store = await openJsonFileStore({ now: systemClock, dataDir: dir })
  await store.close() // a checkpoint: the state file holds both, the segment is deleted
  expect(readdirSync(join(dir, 'changes'))).toEqual([])
  writeFileSync(segment, kept) // as if the deletion had not happened
  const again = await openJsonFileStore({ now: systemClock, dataDir: dir })
  expect([...again.committed().flags.keys()]).toEqual(['f0', 'f1'])
  expect(again.committed().revision).toBe(2)
  await again.close()
})

test('a clean stop during a checkpoint writes the changes that came after its snapshot too', async () => {
  const dir = tempDir()
  dirs.push(dir)
  let release: () => void = () => {}
  const held = new Promise<void>((resolve) => {
    release = resolve
  })
  let holding = false
  const store = await openJsonFileStore({
    now: systemClock,
    dataDir: dir,
    checkpoints: { afterMs: 0 },
    faults: async (path) => {
      if (holding && path.endsWith('flagd.json')) await held
    },
  })
  await store.transact(meta, (tx) => tx.put('flags', sampleFlag('early')))
  holding = true
  const checkpoint = (store as unknown as { checkpoint(): Promise<void> }).checkpoint() // its snapshot: 'early' only
  await store.transact(meta, (tx) => tx.put('flags', sampleFlag('late')))
  const closing = store.close()
  holding = false
  release()
  await Promise.all([checkpoint, closing])
  expect([...readStateFileOnly(join(dir, 'flagd.json')).flags.keys()].sort()).toEqual(['early', 'late'])
  expect(readdirSync(join(dir, 'changes'))).toEqual([])
})

test('audit entries past a restored backup are kept aside, not deleted', async () => {
  const dir = tempDir()
  dirs.push(dir)
  let store = await openJsonFileStore({ now: systemClock, dataDir: dir })
  for (const name of ['a', 'b']) await store.transact(meta, (tx) => tx.put('flags', sampleFlag(name)))
  const backup = await (store.backup as () => Promise<{ text: string }>)()
  for (const name of ['c', 'd']) await store.transact(meta, (tx) => tx.put('flags', sampleFlag(name)))
  await store.close()
  // the documented restore: changes/ moved away, the backup put back as flagd.json
  rmSync(join(dir, 'changes'), { recursive: true })
  writeFileSync(join(dir, 'flagd.json'), backup.text)
  const logged: string[] = []
  store = await openJsonFileStore({ now: systemClock, dataDir: dir, log: (line) => logged.push(line) })
  try {
    expect([...store.committed().flags.keys()]).toEqual(['a', 'b'])
    expect((await store.audit.query({ limit: 10 })).map((e) => e.target.name)).toEqual(['b', 'a'])
    const aside = readdirSync(join(dir, 'audit')).filter((n) => n.startsWith('cut-off-'))
    expect(aside).toHaveLength(1)
    const kept = readFileSync(join(dir, 'audit', aside[0] as string), 'utf8')
    expect(kept).toContain('"name":"c"')
    expect(kept).toContain('"name":"d"')
    expect(logged.join('\n')).toContain(`moved to audit/${aside[0]}`)
  } finally {
    await store.close()
  }
})

test('a journal copied from another data directory is refused, even where its revisions line up', async () => {
  const other = await journalOf(2) // its lines continue revision 0
  const dir = tempDir()
  dirs.push(dir)
  const store = await openJsonFileStore({ now: systemClock, dataDir: dir })
  await store.close() // an empty store at revision 0, with its own identity
  mkdirSync(join(dir, 'changes'), { recursive: true })
  copyFileSync(segmentOf(other), join(dir, 'changes', 'changes-0000000001.jsonl'))
  await expect(openJsonFileStore({ now: systemClock, dataDir: dir })).rejects.toThrow(/belong to another data directory \(store sto_/)
})

test('a state file from before store ids gets one at opening, and its journal lines carry it', async () => {
  const dir = tempDir()
  dirs.push(dir)
  let store = await openJsonFileStore({ now: systemClock, dataDir: dir })
  await store.close()
  const file = JSON.parse(readFileSync(join(dir, 'flagd.json'), 'utf8'))
  delete file.storeId
  writeFileSync(join(dir, 'flagd.json'), JSON.stringify(file))
  store = await openJsonFileStore({ now: systemClock, dataDir: dir, checkpoints: { afterMs: 0 } })
  const id = JSON.parse(readFileSync(join(dir, 'flagd.json'), 'utf8')).storeId
  expect(id).toMatch(/^sto_/)
  await store.transact(meta, (tx) => tx.put('flags', sampleFlag('a')))
  expect(readChangeJournal(dir, undefined, false).batches.map((b) => b.store)).toEqual([id])
  await store.close()
})

test('a checkpoint that fails (a full disk) changes nothing: writes go on, and the next one writes the state file', async () => {
  const dir = tempDir()
  dirs.push(dir)
  let full = true
  const logged: string[] = []
  const store = await openJsonFileStore({
    now: systemClock,
    dataDir: dir,
    checkpoints: { afterMs: 0 },
    log: (line) => logged.push(line),
    faults: (path) => {
      if (full && path.endsWith('flagd.json')) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
    },
  })
  const inside = store as unknown as { checkpoint(): Promise<void> }
  await store.transact(meta, (tx) => tx.put('flags', sampleFlag('a')))
  await inside.checkpoint()
  expect(logged.join('\n')).toContain('writing the state file failed (every change is safe in the change journal; retried later)')
  expect(store.writable).toBe(true)
  expect(readStateFileOnly(join(dir, 'flagd.json')).flags.size).toBe(0)
  await store.transact(meta, (tx) => tx.put('flags', sampleFlag('b')))
  full = false
  await inside.checkpoint()
  expect([...readStateFileOnly(join(dir, 'flagd.json')).flags.keys()].sort()).toEqual(['a', 'b'])
  expect(readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([])
  await store.close()
})
