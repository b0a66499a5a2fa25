/** What flagd accepts as a JSON object: not null, not an array, and no prototype-changing keys. */

import { InvalidError } from './errors.ts'

/** True when `v` is a JSON object. */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** `input` as a JSON object, or a 400 saying that the request body must be one. */
export function requireJsonObject(input: unknown): Record<string, unknown> {
  if (!isJsonObject(input)) throw new InvalidError('request body must be a JSON object', 'body', 'must be a JSON object')
  return input
}

/**
 * True when objects and lists in `v` nest more than `max` levels deep (the outermost is level 1).
 * The one check of a parsed value's depth: rules and evaluation contexts are walked recursively, so
 * both are bounded by it (docs/targeting.md#bounds). It stops at the first branch past `max`.
 */
export function nestingExceeds(v: unknown, max: number): boolean {
  if (v === null || typeof v !== 'object') return false
  if (max <= 0) return true
  // no list of the children is made: an import walks every rule of thousands of flags (docs/performance.md#imports)
  if (Array.isArray(v)) {
    for (const child of v) if (child !== null && typeof child === 'object' && nestingExceeds(child, max - 1)) return true
    return false
  }
  for (const key in v)
    if (Object.hasOwn(v, key)) {
      const child = (v as Record<string, unknown>)[key]
      if (child !== null && typeof child === 'object' && nestingExceeds(child, max - 1)) return true
    }
  return false
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

/** The dotted path of `keys` as `forbiddenKeys` reports it. */
function dotted(keys: readonly string[]): string {
  let path = ''
  for (const key of keys) path = path ? `${path}.${key}` : key
  return path
}

/** Walks `value` for `forbiddenKeys`, `keys` being the path to it (spelt out only for a key reported). */
function collectForbidden(value: object, keys: string[], out: string[], depth: number): void {
  if (depth > 64) return
  if (Array.isArray(value)) {
    // an array of parsed JSON has index keys only, never a forbidden one: no list of them is made
    // (a foreign import's rules hold hundreds of thousands of arrays, docs/performance.md#imports)
    for (let i = 0; i < value.length; i++) {
      const child: unknown = value[i]
      if (typeof child !== 'object' || child === null) continue
      keys.push(String(i))
      collectForbidden(child, keys, out, depth + 1)
      keys.pop()
    }
    return
  }
  for (const key of Object.keys(value)) {
    if (FORBIDDEN_KEYS.has(key)) {
      keys.push(key)
      out.push(dotted(keys))
      keys.pop()
      continue
    }
    const child = (value as Record<string, unknown>)[key]
    if (typeof child !== 'object' || child === null) continue
    keys.push(key)
    collectForbidden(child, keys, out, depth + 1)
    keys.pop()
  }
}

/**
 * Paths of `__proto__`, `constructor` or `prototype` keys anywhere in a parsed JSON value. Such keys
 * are refused in every request body and document (docs/api.md#conventions): spread or merged into an object,
 * they would change its prototype instead of being refused as unknown fields.
 */
export function forbiddenKeys(value: unknown): string[] {
  const out: string[] = []
  if (typeof value === 'object' && value !== null) collectForbidden(value, [], out, 0)
  return out
}

/**
 * False when JSON `text` cannot hold a `__proto__`, `constructor` or `prototype` key, so the walk of
 * `forbiddenKeys` over its value may be left out: only a `\u` escape spells a letter or `_` other
 * than as itself, so without one such a key is in the text as it reads (docs/performance.md#third-round-2026-12-07).
 */
export function mayHoldForbiddenKeys(text: string): boolean {
  return text.includes('\\u') || text.includes('proto') || text.includes('constructor')
}
