import { afterEach, expect, spyOn, test } from 'bun:test'
import { jsonNestsDeeperThan, MAX_JSON_DEPTH, readBoundedJson } from '../../src/domain/bounded-json.ts'

const bytes = (text: string) => new TextEncoder().encode(text)
const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`

afterEach(() => {
  ;(JSON.parse as unknown as { mockRestore?: () => void }).mockRestore?.()
})

test('depth counts the outermost object or list as level 1, and brackets inside strings not at all', () => {
  expect(jsonNestsDeeperThan(bytes(nested(32)), 32)).toBe(false)
  expect(jsonNestsDeeperThan(bytes(nested(33)), 32)).toBe(true)
  expect(jsonNestsDeeperThan(bytes('{"a":{"b":[1]}}'), 3)).toBe(false)
  expect(jsonNestsDeeperThan(bytes('{"a":{"b":[1]}}'), 2)).toBe(true)
  expect(jsonNestsDeeperThan(bytes(`{"s":"${'['.repeat(100)}"}`), 1)).toBe(false)
  expect(jsonNestsDeeperThan(bytes(`{"s":"\\"${'['.repeat(100)}"}`), 1)).toBe(false) // escaped quote
  expect(jsonNestsDeeperThan(bytes(`{"s":"\\\\",${'"x":'}[[[1]]]}`), 3)).toBe(true) // escaped backslash ends the string
  expect(jsonNestsDeeperThan(bytes(`{"é${'['.repeat(40)}":1}`), 1)).toBe(false)
})

test('a nesting bomb is refused before JSON.parse builds anything', () => {
  const parse = spyOn(JSON, 'parse')
  const bomb = bytes('['.repeat(1024 * 1024))
  expect(readBoundedJson(bomb)).toEqual({ ok: false, problem: 'too-deep' })
  expect(readBoundedJson(bytes(`{"context":{},"x":${nested(MAX_JSON_DEPTH)}}`))).toEqual({ ok: false, problem: 'too-deep' })
  expect(parse).not.toHaveBeenCalled()
})

test('readBoundedJson reads JSON within the depth and names every other problem', () => {
  const ok = readBoundedJson(bytes(`{"a":${nested(31)}}`))
  expect(ok.ok && ok.value).toEqual({ a: JSON.parse(nested(31)) })
  expect(readBoundedJson(bytes('  '))).toEqual({ ok: false, problem: 'empty' })
  expect(readBoundedJson(bytes('{"a":'))).toEqual({ ok: false, problem: 'not-json' })
  expect(readBoundedJson(new Uint8Array([0x22, 0xff, 0x22]))).toEqual({ ok: false, problem: 'not-utf8' })
})
