/** Characters are code points (contract): counted without walking a huge string to its end. */

import { expect, test } from 'bun:test'
import { codePointCount } from '../../src/domain/code-points.ts'

test('codePointCount counts code points, stopping just past the cap', () => {
  expect(codePointCount('a😀b')).toBe(3)
  expect(codePointCount('😀'.repeat(5), 5)).toBe(5)
  expect(codePointCount('😀'.repeat(6), 5)).toBe(6)
  expect(codePointCount('😀'.repeat(3) + 'a'.repeat(4), 5)).toBe(6) // length 10 > cap, counted to cap + 1
  expect(codePointCount('p'.repeat(1_000_000), 1024)).toBe(1025)
})
