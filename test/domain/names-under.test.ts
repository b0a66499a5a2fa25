/** namesUnder: the names of a sorted list under a prefix, by binary search. */

import { expect, test } from 'bun:test'
import { namesUnder } from '../../src/domain/names-under.ts'

test('the names under a prefix, in order; none, all, and a prefix past the end', () => {
  const names = ['a/x', 'app/a', 'app/b', 'apq', 'b/1']
  expect(namesUnder(names, 'app/')).toEqual(['app/a', 'app/b'])
  expect(namesUnder(names, 'zz')).toEqual([])
  expect(namesUnder(names, '')).toEqual(names)
  expect(namesUnder([], 'a')).toEqual([])
})
