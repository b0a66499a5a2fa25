/** Server-generated identifiers: 128 random bits, URL-safe, never reused in practice. */

/** A new opaque id with a readable prefix (`usr_…`, `ses_…`, `flg_…`). */
export function newId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return `${prefix}_${Buffer.from(bytes).toString('base64url')}`
}
