/**
 * The shape of the one state file, its schema version, and the checks applied when it is loaded.
 * A file that fails them stops start-up: state is never silently reset.
 */

import type { Flag } from '../domain/flag.ts'
import type { StoredSession } from '../domain/session.ts'
import type { StoredUser } from '../domain/user.ts'

/** The schema version this build writes; files with a higher one were written by a newer flagd. */
export const SCHEMA_VERSION = 1

/** Everything flagd keeps. Maps are keyed by id (users, sessions) or name (flags). */
export interface State {
  schemaVersion: number
  users: Record<string, StoredUser>
  sessions: Record<string, StoredSession>
  flags: Record<string, Flag>
}

/** A fresh, empty state. */
export function emptyState(): State {
  return { schemaVersion: SCHEMA_VERSION, users: {}, sessions: {}, flags: {} }
}

/** The state file could not be used; the message says what to do. */
export class CorruptStateError extends Error {
  constructor(path: string, problem: string) {
    super(
      `state file ${path} cannot be used: ${problem}. flagd will not start rather than risk losing data; ` +
        'restore it from a backup or move it away to start empty',
    )
    this.name = 'CorruptStateError'
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/** Parses and checks a state file's text; throws `CorruptStateError` naming the problem. */
export function parseState(path: string, text: string): State {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (err) {
    throw new CorruptStateError(path, `it is not valid JSON (${(err as Error).message})`)
  }
  if (!isPlainObject(raw)) throw new CorruptStateError(path, 'it is not a JSON object')
  const version = raw.schemaVersion
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw new CorruptStateError(path, 'it has no valid schemaVersion')
  }
  if (version > SCHEMA_VERSION) {
    throw new CorruptStateError(path, `it has schemaVersion ${version}, written by a newer flagd (this one reads up to ${SCHEMA_VERSION})`)
  }
  for (const key of ['users', 'sessions', 'flags'] as const) {
    if (!isPlainObject(raw[key])) throw new CorruptStateError(path, `its "${key}" is missing or not an object`)
  }
  return raw as unknown as State
}

/** Looks up an own entry of a state map; `__proto__` and friends never resolve to the prototype. */
export function ownEntry<T>(map: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined
}
