/** Durable file replacement in two halves: staged content is on disk but not in place until commit. */

import { afterEach, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { removeStaleTempFiles, stageFile, writeFileAtomic } from '../../src/io/atomic-write.ts'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
function dir(): string {
  const d = mkdtempSync(join(tmpdir(), 'flagd-atomic-'))
  dirs.push(d)
  return d
}

test('a staged file leaves the target as it was until commit, then replaces it (mode 0600, no temp left)', async () => {
  const d = dir()
  const target = join(d, 'state.json')
  writeFileSync(target, 'old')
  const staged = await stageFile(target, 'new')
  expect(readFileSync(target, 'utf8')).toBe('old')
  const temps = readdirSync(d).filter((n) => n !== 'state.json')
  expect(temps).toHaveLength(1)
  expect(temps[0]?.startsWith('state.json.tmp-')).toBe(true)
  expect(readFileSync(join(d, temps[0] as string), 'utf8')).toBe('new')
  await staged.commit()
  expect(readFileSync(target, 'utf8')).toBe('new')
  expect(statSync(target).mode & 0o777).toBe(0o600)
  expect(readdirSync(d)).toEqual(['state.json'])
})

test('a discarded stage removes its temp file and leaves the target alone', async () => {
  const d = dir()
  const target = join(d, 'state.json')
  writeFileSync(target, 'old')
  const staged = await stageFile(target, 'new')
  await staged.discard()
  expect(readdirSync(d)).toEqual(['state.json'])
  expect(readFileSync(target, 'utf8')).toBe('old')
})

test('a stage that cannot be written rejects and leaves nothing behind', async () => {
  const d = dir()
  await expect(stageFile(join(d, 'missing', 'state.json'), 'x')).rejects.toMatchObject({ code: 'ENOENT' })
  expect(readdirSync(d)).toEqual([])
})

test('a commit whose rename fails rejects and removes the temp file', async () => {
  const d = dir()
  const target = join(d, 'state.json')
  const staged = await stageFile(target, 'new')
  // a directory where the file should go: rename(2) refuses to put a file over it
  mkdirSync(target)
  writeFileSync(join(target, 'keep'), 'x')
  await expect(staged.commit()).rejects.toBeDefined()
  expect(readdirSync(d)).toEqual(['state.json'])
})

test('writeFileAtomic writes bytes and text; stale temp files are found by their prefix', async () => {
  const d = dir()
  const target = join(d, 'f.bin')
  await writeFileAtomic(target, new Uint8Array([1, 2, 3]))
  expect([...readFileSync(target)]).toEqual([1, 2, 3])
  await writeFileAtomic(target, 'text')
  expect(readFileSync(target, 'utf8')).toBe('text')
  writeFileSync(join(d, 'f.bin.tmp-123-abc'), 'torn')
  expect(await removeStaleTempFiles(target)).toBe(1)
  expect(existsSync(join(d, 'f.bin.tmp-123-abc'))).toBe(false)
})
