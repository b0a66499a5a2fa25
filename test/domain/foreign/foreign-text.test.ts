/**
 * A YAML or TOML file of another tool is read with the bounds of every document from outside
 * (docs/api.md#conventions): aliases cannot blow a small file up, nesting is bounded, and keys that
 * would change a prototype are refused by their path, the depth and size problems told first.
 */

import { expect, test } from 'bun:test'
import { readForeignText } from '../../../src/domain/foreign/foreign-text.ts'

const read = (text: string, syntax: 'yaml' | 'toml' | 'json' = 'yaml') => readForeignText(new TextEncoder().encode(text), syntax)

test('a billion laughs is refused, and so is a small file whose aliases expand past its size', () => {
  const laughs = (levels: number) => {
    const lines = ['a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]']
    for (let i = 1; i < levels; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: 9 }, () => `*a${i - 1}`).join(', ')}]`)
    return lines.join('\n')
  }
  // Bun's parser refuses the largest itself; flagd's count of values refuses what it lets through
  expect(read(laughs(9))).toMatchObject({
    ok: false,
    reason: expect.stringMatching(/^not (valid YAML: Excessive aliasing|accepted: it holds more values)/),
  })
  expect(read(laughs(4))).toEqual({
    ok: false,
    reason: 'not accepted: it holds more values than its size allows (aliases repeated too often)',
  })
})

test('nesting past the bound is refused, in YAML and TOML', () => {
  const deep = `${'['.repeat(40)}1${']'.repeat(40)}`
  expect(read(`a: ${deep}`)).toEqual({ ok: false, reason: 'not accepted: it is nested deeper than 32 levels' })
  expect(read(`a = ${deep}`, 'toml')).toEqual({ ok: false, reason: 'not accepted: it is nested deeper than 32 levels' })
})

test('a forbidden key is refused by its path, in objects and lists; nesting is told first', () => {
  expect(read('flags:\n  - key: a\n    rules:\n      constructor: 1\n')).toEqual({
    ok: false,
    reason: 'not accepted: the key flags.0.rules.constructor is not allowed',
  })
  expect(read('a = 1\n[b.prototype]\nc = 2\n', 'toml')).toEqual({ ok: false, reason: 'not accepted: the key b.prototype is not allowed' })
  expect(read(`constructor: 1\na: ${'['.repeat(40)}1${']'.repeat(40)}`)).toEqual({
    ok: false,
    reason: 'not accepted: it is nested deeper than 32 levels',
  })
})

test('a file within the bounds reads as its parser reads it, anchors and merge keys included', () => {
  const text = 'base: &base {a: 1, b: "2", c: 0x10}\nuse:\n  <<: *base\n  b: three\nlist: [*base, *base]\n'
  expect(read(text)).toEqual({ ok: true, value: Bun.YAML.parse(text) })
  expect(read('a = 1\n[b]\nc = "d"\n', 'toml')).toEqual({ ok: true, value: { a: 1, b: { c: 'd' } } })
})
