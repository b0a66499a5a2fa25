/**
 * `LayeredMap` against a plain Map twin: random sets, deletes and forks (a fork is a draft's copy;
 * the forked-from version must never change) and settles (a sealed draft's new base), compared after every step by size, `get`, `has` and
 * contents; and the order a Map gives for the store's uses (in place when replaced, new at the end).
 */

import { expect, test } from 'bun:test'
import fc from 'fast-check'
import { LayeredMap } from '../../src/storage/layered-map.ts'

type Op = { kind: 'set' | 'delete' | 'fork' | 'settle'; key: number; value: number }
const op: fc.Arbitrary<Op> = fc.record({
  kind: fc.constantFrom('set' as const, 'set' as const, 'delete' as const, 'fork' as const, 'settle' as const),
  key: fc.nat(300),
  value: fc.nat(1000),
})

const sortedEntries = (m: ReadonlyMap<string, number>) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))

test('a layered map answers as a Map would, and a version once forked from never changes', () => {
  fc.assert(
    fc.property(fc.array(op, { maxLength: 600 }), (ops) => {
      let map = LayeredMap.of<number>()
      let twin = new Map<string, number>()
      const versions: [LayeredMap<number>, [string, number][]][] = []
      for (const o of ops) {
        const key = `k${o.key}`
        if (o.kind === 'fork') {
          versions.push([map, sortedEntries(twin)])
          map = map.fork()
          twin = new Map(twin)
        } else if (o.kind === 'settle') {
          map = map.settled()
        } else if (o.kind === 'set') {
          map.set(key, o.value)
          twin.set(key, o.value)
        } else expect(map.delete(key)).toBe(twin.delete(key))
        expect(map.size).toBe(twin.size)
        expect([map.get(key), map.has(key)]).toEqual([twin.get(key), twin.has(key)])
      }
      expect(sortedEntries(map)).toEqual(sortedEntries(twin))
      expect([...map.keys()].length).toBe(twin.size)
      for (const [version, entries] of versions) expect(sortedEntries(version)).toEqual(entries)
    }),
    { numRuns: 200 },
  )
})

test('order: a replaced row keeps its place, a new one comes last, a deleted one is gone, across forks', () => {
  let map = LayeredMap.of(
    new Map([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]),
  )
  map = map.fork()
  map.set('b', 20)
  map.set('d', 4)
  map.delete('a')
  map = map.fork()
  map.set('e', 5)
  expect([...map]).toEqual([
    ['b', 20],
    ['c', 3],
    ['d', 4],
    ['e', 5],
  ])
  expect([...map.values()]).toEqual([20, 3, 4, 5])
  const seen: string[] = []
  map.forEach((_, key) => {
    seen.push(key)
  })
  expect(seen).toEqual(['b', 'c', 'd', 'e'])
})
