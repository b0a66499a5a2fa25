/** The conditional request headers `If-Match` (docs/api.md#flags) and `If-None-Match` (docs/openfeature.md#ofrep). */

import type { IfMatch } from '../services/flag-service.ts'

/**
 * Parses `"4"`, `W/"4"`, `4`, `*` or a comma list of these. Absent → `undefined`; a tag that is not
 * a revision number can never match, so it becomes -1 (and the write answers 412).
 */
export function parseIfMatch(header: string | null): IfMatch | undefined {
  if (header === null) return undefined
  const tags = header.split(',').map((t) =>
    t
      .trim()
      .replace(/^W\//, '')
      .replace(/^"(.*)"$/, '$1'),
  )
  if (tags.includes('*')) return '*'
  return tags.map((t) => (/^\d{1,15}$/.test(t) ? Number(t) : -1))
}

/**
 * `If-None-Match` against the current ETag (RFC 9110 weak comparison): true when the client's copy is
 * current, so the answer is `304`. Takes a list and tags with or without `W/`; `*` ("any copy") only
 * where `star` allows it: a read of a resource that exists, never an evaluation, whose answer depends
 * on the context sent and so is only unchanged when its own tag says so.
 */
export function noneMatch(header: string | null, etag: string, star = true): boolean {
  if (header === null) return false
  const current = etag.replace(/^W\//, '')
  for (const raw of header.split(',')) {
    const tag = raw.trim()
    if ((star && tag === '*') || tag.replace(/^W\//, '') === current) return true
  }
  return false
}
