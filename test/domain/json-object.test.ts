/**
 * Keys that would change a prototype are found anywhere in a parsed value and reported by their
 * dotted path (docs/api.md#conventions), lists' indexes included; nesting past 64 levels is not walked.
 */

import { expect, test } from 'bun:test'
import { forbiddenKeys } from '../../src/domain/json-object.ts'

test('forbidden keys are reported by their dotted path, at any depth and inside lists', () => {
  const value = JSON.parse(
    '{"__proto__": 1, "a": {"b": [{"constructor": 2}, {"c": {"prototype": 3}}]}, "": {"x": {"__proto__": {}}}, "ok": [1, "two", null]}',
  )
  expect(forbiddenKeys(value)).toEqual(['__proto__', 'a.b.0.constructor', 'a.b.1.c.prototype', 'x.__proto__'])
  expect(forbiddenKeys({ plain: { nested: [1, 2, { deep: true }] } })).toEqual([])
  expect(forbiddenKeys('text')).toEqual([])
  expect(forbiddenKeys(null)).toEqual([])
})

test('a value nested past 64 levels is not walked further', () => {
  let deep: unknown = JSON.parse('{"__proto__": 1}')
  for (let i = 0; i < 65; i++) deep = { d: deep }
  expect(forbiddenKeys(deep)).toEqual([])
  let shallow: unknown = JSON.parse('{"__proto__": 1}')
  for (let i = 0; i < 64; i++) shallow = { d: shallow }
  expect(forbiddenKeys(shallow)).toHaveLength(1)
})
