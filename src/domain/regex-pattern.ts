/**
 * User-supplied patterns, compiled and run with re2js (RE2 semantics, linear time). The platform's
 * RegExp must never see a user's pattern: a catastrophic one blocks the event loop. Compiled
 * patterns are cached (bounded), since the same few patterns are checked again and again.
 */

import { RE2JS } from 're2js'
import { BoundedMap } from './bounded-map.ts'

export const PATTERN_MAX = 1000
const CACHE_MAX = 1000
const cache = new BoundedMap<string, RE2JS>(CACHE_MAX)

/** Compiles `pattern`, or returns the reason RE2 cannot. */
export function compilePattern(pattern: string): RE2JS | string {
  const cached = cache.get(pattern)
  if (cached) return cached
  let compiled: RE2JS
  try {
    compiled = RE2JS.compile(pattern)
  } catch (err) {
    return `is not a valid RE2 pattern (${(err as Error).message.replace(/^error parsing regexp: /, '')})`
  }
  cache.set(pattern, compiled)
  return compiled
}

/** True when `value` contains a match of the compiled pattern (unanchored, like JSON Schema). */
export function patternMatches(compiled: RE2JS, value: string): boolean {
  return compiled.matcher(value).find()
}
