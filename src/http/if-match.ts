/** The `If-Match` request header (contract §5.4), parsed for the services. */

import type { IfMatch } from '../services/flag-service.ts'

/**
 * Parses `"4"`, `W/"4"`, `4`, `*` or a comma list of these. Absent → `undefined`; a tag that is not
 * a revision number can never match, so it becomes -1 (and the write answers 412).
 */
export function parseIfMatch(header: string | null): IfMatch | undefined {
  if (header === null) return undefined
  const tags = header.split(',').map((t) => t.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1'))
  if (tags.includes('*')) return '*'
  return tags.map((t) => (/^\d{1,15}$/.test(t) ? Number(t) : -1))
}
