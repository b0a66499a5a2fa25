/**
 * A text is written whole, however little each write takes: it goes to the handle as text, and only
 * what a short write left over is made into bytes (docs/performance.md#imports).
 */

import { expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { open, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { writeAll } from '../../src/io/write-all.ts'
import { tempDir } from '../helpers/test-app.ts'

/** A handle that takes at most `most` bytes a write and records what it was given. */
function shortHandle(most: number) {
  const calls: string[] = []
  const out: Buffer[] = []
  const handle = {
    write: async (data: string | Buffer, offset = 0, length?: number) => {
      calls.push(typeof data)
      const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data.subarray(offset, offset + (length ?? data.length - offset))
      const taken = bytes.subarray(0, most)
      out.push(Buffer.from(taken))
      return { bytesWritten: taken.length, buffer: data }
    },
  }
  return { handle: handle as never, calls, text: () => Buffer.concat(out).toString('utf8') }
}

test('a text is handed over as text; a short write has the rest written as bytes, nothing lost or repeated', async () => {
  const text = `{"name":"café ✓","values":[${Array.from({ length: 50 }, (_, i) => i).join(',')}]}`
  const whole = shortHandle(1_000_000)
  expect(await writeAll(whole.handle, text)).toBe(Buffer.byteLength(text))
  expect(whole.calls).toEqual(['string'])
  const short = shortHandle(7)
  expect(await writeAll(short.handle, text)).toBe(Buffer.byteLength(text))
  expect(short.calls[0]).toBe('string')
  expect(short.text()).toBe(text)
})

test('a real file receives every byte of the text', async () => {
  const dir = tempDir()
  try {
    const path = join(dir, 'out.txt')
    const handle = await open(path, 'w')
    const text = 'ünïcödé ✓ '.repeat(50_000)
    expect(await writeAll(handle, text)).toBe(Buffer.byteLength(text))
    await handle.close()
    expect(await readFile(path, 'utf8')).toBe(text)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
