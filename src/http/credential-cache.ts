/**
 * The principal behind a request's credential headers, remembered for the pipeline while nothing
 * it depends on can have changed. An entry holds while the committed state is the very object it was
 * found in (a logout, a revocation, a changed user or permission is a commit, and every commit makes
 * a new state), for at most a second, and never past the session's, the session token's or the API
 * token's expiry. A remembered read skips the header parse, the verified-token cache and the session
 * and user checks; the first request after any change, or after the second, goes the whole way
 * (`knownCredential`), which also keeps last-use times current (they have a minute's precision).
 */

import { BoundedMap } from '../domain/bounded-map.ts'
import type { Principal } from '../domain/principal.ts'
import type { AuthService } from '../services/auth-service.ts'
import { type AuthDeps, type KnownCredential, knownCredential } from './authenticate.ts'

/** The cache (see module comment). */
export interface CredentialCache {
  /** As `knownCredential`: the principal of a credential this process knows, else `undefined`. */
  principal(headers: Headers): Principal | undefined
}

interface Entry {
  principal: Principal
  state: CredentialState
  until: number
}

/** The committed state credentials were checked against (a new object after every commit). */
type CredentialState = ReturnType<AuthService['credentialState']>

const HOLD_MS = 1000

/** The earliest instant the credential may stop being valid by the clock alone. */
function expiryOf(known: KnownCredential, state: CredentialState): number {
  const p = known.principal
  let at = known.tokenExpiresAt ?? Number.POSITIVE_INFINITY
  const expiresAt =
    p.kind === 'user' ? state.sessions.get(p.sessionId)?.expiresAt : p.kind === 'token' ? state.tokens.get(p.tokenId)?.expiresAt : undefined
  if (expiresAt) at = Math.min(at, Date.parse(expiresAt))
  return at
}

/** Creates the cache; `maxEntries` bounds each of its two tables (by Authorization, by X-API-Key). */
export function createCredentialCache(deps: AuthDeps, maxEntries = 10_000): CredentialCache {
  const byAuthorization = new BoundedMap<string, Entry>(maxEntries)
  const byApiKey = new BoundedMap<string, Entry>(maxEntries)
  return {
    principal(headers) {
      const authorization = headers.get('authorization')
      const apiKey = headers.get('x-api-key')
      // both headers at once are rare and have rules of their own: always the whole way
      const table = apiKey === null ? byAuthorization : authorization === null ? byApiKey : undefined
      const key = apiKey ?? authorization
      if (table === undefined || key === null) return knownCredential(deps, headers)?.principal
      const now = deps.auth.clock()
      const state = deps.auth.credentialState()
      const hit = table.get(key)
      if (hit !== undefined && hit.state === state && now < hit.until) return hit.principal
      const known = knownCredential(deps, headers)
      if (known === undefined) {
        table.delete(key)
        return undefined
      }
      table.set(key, { principal: known.principal, state, until: Math.min(now + HOLD_MS, expiryOf(known, state)) })
      return known.principal
    },
  }
}
