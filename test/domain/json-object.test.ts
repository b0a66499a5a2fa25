/**
 * Keys that would change a prototype are found anywhere in a parsed value and reported by their
 * dotted path (docs/api.md#conventions), lists' indexes included; nesting past 64 levels is not walked.
 */

import { expect, test } from 'bun:test'
import { forbiddenKeys, mayHoldForbiddenKeys } from '../../src/domain/json-object.ts'

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

test('a text that holds a forbidden key, however it is escaped, is one the walk is not left out for', () => {
  const texts: string[] = []
  for (const word of ['__proto__', 'constructor', 'prototype'])
    for (let i = 0; i < word.length; i++) {
      const hex = (word.codePointAt(i) as number).toString(16).padStart(4, '0')
      const spelt = (digits: string) => `${word.slice(0, i)}\\u${digits}${word.slice(i + 1)}`
      texts.push(`{"${word}": 1}`, `{"a": [{"${spelt(hex)}": {}}]}`, `{"x": {"${spelt(hex.toUpperCase())}": 2}}`)
    }
  for (const text of texts) {
    expect(forbiddenKeys(JSON.parse(text)).length).toBeGreaterThan(0)
    expect([text, mayHoldForbiddenKeys(text)]).toEqual([text, true])
  }
  // a text without those words and without a \u escape holds none: its walk is left out
  for (const text of ['{"a": {"b": [1, "two", {"c\\n": "\\"protect\\""}]}}', '{"proTo": 1}', '[]'])
    expect([text, mayHoldForbiddenKeys(text)]).toEqual([text, false])
})
