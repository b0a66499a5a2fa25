/** Login sessions as stored and as listed (docs/api.md#authentication). */

/** A session as kept in the state file. */
export interface StoredSession {
  id: string
  userId: string
  createdAt: string
  expiresAt: string
  lastUsedAt: string
  /**
   * Made by a single sign-on and not yet handed to the browser (docs/single-sign-on.md): it becomes a
   * session when its one-time code is exchanged, once, and lives 60 s until then.
   */
  pendingCode?: true
}

/** A session as `GET /api/sessions` shows it. */
export interface PublicSession {
  id: string
  userId: string
  username: string
  createdAt: string
  expiresAt: string
  lastUsedAt: string
  current: boolean
}

const expiry = new WeakMap<StoredSession, number>()

/** True when the session has expired at `nowMs` (the timestamp is parsed once per session object). */
export function isExpired(s: StoredSession, nowMs: number): boolean {
  let at = expiry.get(s)
  if (at === undefined) {
    at = Date.parse(s.expiresAt)
    expiry.set(s, at)
  }
  return at <= nowMs
}
