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
  for (const child of Object.values(v)) if (nestingExceeds(child, max - 1)) return true
  return false
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype'])

/**
 * Paths of `__proto__`, `constructor` or `prototype` keys anywhere in a parsed JSON value. Such keys
 * are refused in every request body and document (docs/api.md#conventions): spread or merged into an object,
 * they would change its prototype instead of being refused as unknown fields.
 */
export function forbiddenKeys(value: unknown, path = '', out: string[] = [], depth = 0): string[] {
  if (depth > 64 || typeof value !== 'object' || value === null) return out
  for (const key of Object.keys(value)) {
    const child = (value as Record<string, unknown>)[key]
    // a path is spelled out only where it is reported or descended into (evaluation contexts are mostly flat)
    if (FORBIDDEN_KEYS.has(key)) out.push(path ? `${path}.${key}` : key)
    else if (typeof child === 'object' && child !== null) forbiddenKeys(child, path ? `${path}.${key}` : key, out, depth + 1)
  }
  return out
}
