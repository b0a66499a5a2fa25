/**
 * The principal behind a request's credential headers, remembered for the pipeline while nothing
 * it depends on can have changed, in the request cache (docs/architecture.md#caching). An entry
 * holds for the committed revision it was found at (a logout, a revocation, a changed user or
 * permission is a commit, and every commit moves the revision), for at most a second, and never past the session's, the session token's or the API
 * token's expiry. A remembered read skips the header parse, the verified-token cache and the session
 * and user checks; the first request after any change, or after the second, goes the whole way
 * (`knownCredential`), which also keeps last-use times current (they have a minute's precision).
 */

import type { Principal } from '../domain/principal.ts'
import type { RequestCache } from '../domain/request-cache.ts'
import type { AuthService } from '../services/auth-service.ts'
import { type AuthDeps, type KnownCredential, knownCredential } from './authenticate.ts'

/** The cache (see module comment). */
export interface CredentialCache {
  /** As `knownCredential`: the principal of a credential this process knows, else `undefined`. */
  principal(headers: Headers): Principal | undefined
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

/** Creates the cache over `cache`: one region by Authorization, one by X-API-Key. */
export function createCredentialCache(deps: AuthDeps, cache: RequestCache): CredentialCache {
  const sizeOf = () => 256 // a principal: ids, permissions, prefixes
  const byAuthorization = cache.region<Principal>('credentials', sizeOf)
  const byApiKey = cache.region<Principal>('credentials', sizeOf)
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
      const hit = table.get(key, state.revision, now)
      if (hit !== undefined) return hit
      const known = knownCredential(deps, headers)
      if (known === undefined) {
        table.delete(key)
        return undefined
      }
      table.set(key, state.revision, known.principal, Math.min(now + HOLD_MS, expiryOf(known, state)))
      return known.principal
    },
  }
}
