/** Database URLs in messages and logs: the password never appears. */

/** The URL with its password hidden, for messages. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '***'
    return u.toString()
  } catch {
    return 'the database URL'
  }
}
