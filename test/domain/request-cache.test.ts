/** The request cache (src/domain/request-cache.ts): one budget, one invalidation rule. */

import { expect, test } from 'bun:test'
import { RequestCache, textBytes } from '../../src/domain/request-cache.ts'

const KiB = 1024

test('an entry is served for the revision it was made from, and a newer revision drops the region at once', () => {
  const cache = new RequestCache(64 * KiB)
  const lists = cache.region<string>('lists', textBytes)
  lists.set('a', 1, 'made at 1')
  expect(lists.get('a', 1)).toBe('made at 1')
  expect(lists.get('a', 2)).toBeUndefined()
  expect(cache.size().regions.lists).toEqual({ entries: 0, bytes: 0 })
  expect(cache.size().bytes).toBe(0)
  // something made from an older revision than the region holds is not kept
  lists.set('b', 1, 'stale')
  expect(lists.get('b', 2)).toBeUndefined()
  expect(cache.size().entries).toBe(0)
})

test('regions move on their own: a new flags revision leaves credentials alone', () => {
  const cache = new RequestCache(64 * KiB)
  const lists = cache.region<string>('lists', textBytes)
  const credentials = cache.region<string>('credentials', textBytes)
  lists.set('a', 1, 'x')
  credentials.set('token', 7, 'principal')
  expect(lists.get('a', 2)).toBeUndefined()
  expect(credentials.get('token', 7)).toBe('principal')
})

test('an entry with a deadline is not served from then on', () => {
  const cache = new RequestCache(64 * KiB)
  const credentials = cache.region<string>('credentials', textBytes)
  credentials.set('token', 1, 'principal', 1000)
  expect(credentials.get('token', 1, 999)).toBe('principal')
  expect(credentials.get('token', 1, 1000)).toBeUndefined()
  expect(cache.size().entries).toBe(0)
})

test('one budget for every region: the least recently used go first, whichever region holds them', () => {
  const cache = new RequestCache(8 * KiB)
  const a = cache.region<string>('a', textBytes)
  const b = cache.region<string>('b', textBytes)
  const kilo = 'x'.repeat(400) // 800 bytes and the entry's overhead
  a.set('1', 1, kilo)
  b.set('1', 1, kilo)
  a.set('2', 1, kilo)
  expect(a.get('1', 1)).toBe(kilo) // used: it is now newer than b's 1 and a's 2
  for (let i = 0; i < 8; i++) b.set(`more${i}`, 1, kilo) // 11 entries of 898 bytes: two must go
  expect(cache.size().bytes).toBeLessThanOrEqual(8 * KiB)
  expect(b.get('1', 1)).toBeUndefined()
  expect(a.get('2', 1)).toBeUndefined()
  expect(a.get('1', 1)).toBe(kilo)
})

test('a value larger than half the budget is not kept; through() still answers it', () => {
  const cache = new RequestCache(8 * KiB)
  const a = cache.region<string>('a', textBytes)
  let made = 0
  const big = () => {
    made++
    return 'y'.repeat(3 * KiB)
  }
  expect(a.through('k', 1, big)).toHaveLength(3 * KiB)
  expect(a.through('k', 1, big)).toHaveLength(3 * KiB)
  expect(made).toBe(2)
  expect(cache.size().entries).toBe(0)
})

test('through() makes a value once per revision', () => {
  const cache = new RequestCache(64 * KiB)
  const a = cache.region<number>('a', () => 8)
  let made = 0
  const make = () => ++made
  expect(a.through('k', 1, make)).toBe(1)
  expect(a.through('k', 1, make)).toBe(1)
  expect(a.through('k', 2, make)).toBe(2)
})

test('a budget too small to hold anything is refused', () => {
  expect(() => new RequestCache(10)).toThrow(/at least 1 KiB/)
})
