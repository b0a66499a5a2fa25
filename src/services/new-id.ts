/** Server-generated identifiers: 128 random bits, URL-safe, never reused in practice. */

import { randomBytes } from 'node:crypto'

/** A new opaque id with a readable prefix (`usr_…`, `ses_…`). */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(16).toString('base64url')}`
}
