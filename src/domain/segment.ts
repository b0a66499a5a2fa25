/**
 * Segments (docs/targeting.md#rules): named, reusable conditions, flagd's `$evaluators`. A rule refers to
 * one as `{"$ref": "<name>"}`, which stands for the segment's rule. Names are as variant names.
 */

import type { JsonObject } from './flag.ts'

/** A stored segment. Objects are never changed in place: a change stores a new object. */
export interface Segment {
  /** Stable internal id (`seg_…`). Never shown. */
  id: string
  name: string
  description: string
  rule: JsonObject
  createdAt: string
  updatedAt: string
  revision: number
}

/** Why a token confined to some flags may not change segments (its 403 says so). */
export const SEGMENTS_REACH = 'a segment can change the answers of any flag that uses it, inside your flagPrefixes or not'

/** The names of the segments a rule refers to (`$ref` anywhere in it), in first-seen order. */
export function referencedSegments(rule: unknown, out: string[] = []): string[] {
  if (rule === null || typeof rule !== 'object') return out
  if (Array.isArray(rule)) {
    for (const item of rule) referencedSegments(item, out)
    return out
  }
  for (const key in rule) {
    if (!Object.hasOwn(rule, key)) continue
    const value = (rule as Record<string, unknown>)[key]
    if (key === '$ref' && typeof value === 'string') {
      if (!out.includes(value)) out.push(value)
    } else if (value !== null && typeof value === 'object') referencedSegments(value, out)
  }
  return out
}

/** A segment as the API shows it (without `usedBy`, which depends on the flags around it). */
export function toSegmentResource(s: Segment): Record<string, unknown> {
  return { name: s.name, description: s.description, rule: s.rule, createdAt: s.createdAt, updatedAt: s.updatedAt, revision: s.revision }
}
