/** Login sessions as stored and as listed (contract §8). */

/** A session as kept in the state file. */
export interface StoredSession {
  id: string
  userId: string
  createdAt: string
  expiresAt: string
  lastUsedAt: string
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

/** True when the session has expired at `nowMs`. */
export function isExpired(s: StoredSession, nowMs: number): boolean {
  return Date.parse(s.expiresAt) <= nowMs
}
