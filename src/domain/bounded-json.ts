/**
 * The one bounded reading of JSON that comes from outside (request bodies, OFREP contexts, imported
 * files, URL imports): nesting is measured on the bytes, outside strings, BEFORE `JSON.parse` builds
 * anything, so a nesting bomb (`[[[[…`) costs one pass over its bytes instead of a value per level
 * (docs/api.md#conventions). Size is bounded by whoever reads the bytes, while reading them.
 */

/** The deepest JSON flagd reads from outside; the outermost object or list is level 1 (docs/api.md#conventions). */
export const MAX_JSON_DEPTH = 32

/** What went wrong with a JSON text, for each caller to word in its own protocol. */
export type JsonProblem = 'too-deep' | 'not-utf8' | 'empty' | 'not-json'

/** A parsed value (with its text), or the problem that stopped the reading. */
export type JsonReading = { ok: true; value: unknown; text: string } | { ok: false; problem: JsonProblem }

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_LIST = 0x5b
const OPEN_OBJECT = 0x7b
const CLOSE_LIST = 0x5d
const CLOSE_OBJECT = 0x7d

/**
 * True when objects and lists in the JSON bytes nest deeper than `max` levels, counting brackets
 * outside strings only. Malformed input gets an answer too (the parser refuses it afterwards); no
 * multi-byte UTF-8 sequence holds an ASCII byte, so the scan needs no decoding.
 */
export function jsonNestsDeeperThan(bytes: Uint8Array, max: number): boolean {
  let depth = 0
  const n = bytes.length
  for (let i = 0; i < n; i++) {
    const b = bytes[i] as number
    if (b === QUOTE) {
      // skip the string: to the next quote not escaped by an odd run of backslashes
      for (;;) {
        const end = bytes.indexOf(QUOTE, i + 1)
        if (end === -1) return false
        let slashes = 0
        while (bytes[end - 1 - slashes] === BACKSLASH) slashes++
        i = end
        if (slashes % 2 === 0) break
      }
    } else if (b === OPEN_LIST || b === OPEN_OBJECT) {
      if (++depth > max) return true
    } else if (b === CLOSE_LIST || b === CLOSE_OBJECT) depth--
  }
  return false
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

/**
 * Reads JSON bytes: refuses nesting deeper than `maxDepth` before parsing (see module comment), then
 * bytes that are not UTF-8, blank text and text that is not JSON.
 */
export function readBoundedJson(bytes: Uint8Array, maxDepth: number = MAX_JSON_DEPTH): JsonReading {
  if (jsonNestsDeeperThan(bytes, maxDepth)) return { ok: false, problem: 'too-deep' }
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return { ok: false, problem: 'not-utf8' }
  }
  if (text.trim() === '') return { ok: false, problem: 'empty' }
  try {
    return { ok: true, value: JSON.parse(text), text }
  } catch {
    return { ok: false, problem: 'not-json' }
  }
}
