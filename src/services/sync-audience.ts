/**
 * Which flags in-process providers hold (docs/api.md#usage): in-process evaluations are not counted,
 * so a flag used only in-process would look unused and invite deletion. Until providers report
 * their evaluations, a flag counts as in use while a live sync stream holds it, and until
 * `usage.staleDays` after the last one let it go (or after a one-off fetch of it). Kept in memory
 * per token scope (a restart forgets it, and the providers' reconnection brings it back at once);
 * each replica knows the streams it serves.
 */

import { inScope } from '../domain/access-policy.ts'
import { BoundedMap } from '../domain/bounded-map.ts'

/** The scopes remembered (one per distinct set of token prefixes; `[]` is every flag). */
const KEPT_SCOPES = 1024

interface Held {
  scope: readonly string[]
  live: number
  /** When it was last sent or let go (ms). */
  lastAt: number
}

/** The tracker (see module comment). */
export interface SyncAudience {
  /** A stream of `scope` opened; the answer is called when it closes. */
  held(scope: readonly string[]): () => void
  /** A document of `scope` was sent (a one-off fetch, or a change to open streams). */
  served(scope: readonly string[]): void
  /** When `flagName` was last held by an in-process provider (now while one holds it), or `undefined`. */
  lastHeldAt(flagName: string): number | undefined
}

/** Creates the tracker over `clock` (ms). */
export function createSyncAudience(clock: () => number): SyncAudience {
  const scopes = new BoundedMap<string, Held>(KEPT_SCOPES)
  const entry = (scope: readonly string[]): Held => {
    const key = scope.join('\n')
    let held = scopes.get(key)
    if (held === undefined) scopes.set(key, (held = { scope: [...scope], live: 0, lastAt: clock() }))
    return held
  }
  return {
    held(scope) {
      const held = entry(scope)
      held.live++
      held.lastAt = clock()
      let released = false
      return () => {
        if (released) return
        released = true
        held.live--
        held.lastAt = clock()
      }
    },
    served(scope) {
      entry(scope).lastAt = clock()
    },
    lastHeldAt(flagName) {
      let last: number | undefined
      for (const held of scopes.values()) {
        if (held.scope.length > 0 && !held.scope.some((prefix) => inScope(prefix, flagName))) continue
        const at = held.live > 0 ? clock() : held.lastAt
        if (last === undefined || at > last) last = at
      }
      return last
    },
  }
}
