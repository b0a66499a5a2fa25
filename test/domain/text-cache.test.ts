/** The size-bounded cache of rendered texts: entries go oldest first once the characters or the count would pass the ceiling. */

import { expect, test } from 'bun:test'
import { TextCache } from '../../src/domain/text-cache.ts'

test('past its character budget the oldest texts go; the total never passes the budget', () => {
  const cache = new TextCache<number>(1000)
  for (let i = 0; i < 100; i++) {
    cache.set(i, 'x'.repeat(300))
    expect(cache.size.chars).toBeLessThanOrEqual(1000)
  }
  expect(cache.size).toEqual({ entries: 3, chars: 900 })
  expect(cache.get(99)).toHaveLength(300)
  expect(cache.get(96)).toBeUndefined()
})

test('a text larger than the whole budget is not kept; replacing a key counts its new size only', () => {
  const cache = new TextCache<string>(100, 2)
  cache.set('a', 'y'.repeat(101))
  expect(cache.get('a')).toBeUndefined()
  cache.set('a', 'y'.repeat(60))
  cache.set('a', 'y'.repeat(40))
  expect(cache.size).toEqual({ entries: 1, chars: 40 })
  cache.set('b', 'z')
  cache.set('c', 'w') // the entry ceiling: 'a' goes
  expect(cache.get('a')).toBeUndefined()
  expect(cache.size).toEqual({ entries: 2, chars: 2 })
  cache.clear()
  expect(cache.size).toEqual({ entries: 0, chars: 0 })
})

test('what is attached to a text is kept and dropped with it', () => {
  const cache = new TextCache<string, { made: number }>(10)
  cache.set('a', 'xxxxxx', { made: 1 })
  expect(cache.entry('a')).toEqual({ text: 'xxxxxx', attached: { made: 1 } })
  cache.set('b', 'yyyyyy', { made: 2 }) // 12 characters do not fit: a goes, with what it carried
  expect(cache.entry('a')).toBeUndefined()
  expect(cache.entry('b')?.attached).toEqual({ made: 2 })
  expect(cache.size).toEqual({ entries: 1, chars: 6 })
})
