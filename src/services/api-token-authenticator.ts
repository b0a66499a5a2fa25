/**
 * The authentication hot path of API tokens (docs/api.md#api-tokens): a presented secret turned back
 * into a principal on every request. A secret is hashed and looked up in an index of the committed
 * tokens, rebuilt only when the tokens table changes, so a request that uses a token costs one
 * SHA-256 and a map lookup; revocation and expiry hold from the very next request because the index
 * always reflects the committed snapshot. A token's last use is noted in memory, once a minute at most.
 */

import { hashTokenSecret, isTokenExpired, type StoredToken, sameHash } from '../domain/api-token.ts'
import type { Clock } from '../domain/clock.ts'
import { UnauthorizedError } from '../domain/errors.ts'
import type { TokenPrincipal } from '../domain/principal.ts'
import type { RequestCache } from '../domain/request-cache.ts'
import type { Store } from '../storage/store.ts'

/** Secrets turned into principals. */
export interface ApiTokenAuthenticator {
  /** The principal behind a presented secret; throws `UnauthorizedError` when unknown, revoked or expired. */
  authenticate(secret: string): TokenPrincipal
  /** The principal of a token by id, checked afresh (stream tickets and open streams); 401 when gone or expired. */
  principalById(tokenId: string): TokenPrincipal
}

const LAST_USED_PRECISION_MS = 60_000
const MAX_SECRET_LENGTH = 256

/** Creates the authenticator; verified secrets are kept in `cache`. */
export function createApiTokenAuthenticator(store: Store, now: Clock, cache: RequestCache): ApiTokenAuthenticator {
  let index = new Map<string, StoredToken>()
  let indexedAt = -1
  const principals = new WeakMap<StoredToken, TokenPrincipal>()
  const lastTouch = new WeakMap<StoredToken, number>()
  // Secrets already checked, and the row each one matched: the hot path skips the hash. Kept in the
  // request cache for the tokens' revision, holding only secrets that clients sent anyway
  const verified = cache.region<StoredToken>('verified-api-tokens', () => 256)
  const tokensRevision = () => store.committed().revisionOf('tokens')

  const byHash = (hash: string): StoredToken | undefined => {
    const snapshot = store.committed()
    const at = snapshot.revisionOf('tokens')
    if (at !== indexedAt) {
      index = new Map([...snapshot.tokens.values()].map((t) => [t.secretHash, t]))
      indexedAt = at
    }
    return index.get(hash)
  }

  /** The principal of a committed token row: refused when expired; its use is noted (in memory). */
  const principalOf = (t: StoredToken): TokenPrincipal => {
    const at = now().getTime()
    if (isTokenExpired(t, at)) throw new UnauthorizedError(`API token ${t.name} expired at ${t.expiresAt}`)
    const used = lastTouch.get(t)
    if (used === undefined || at - used >= LAST_USED_PRECISION_MS) {
      store.touch('tokens', t.id, new Date(at).toISOString())
      lastTouch.set(t, at)
    }
    let principal = principals.get(t)
    if (!principal) {
      principal = Object.freeze({
        kind: 'token',
        tokenId: t.id,
        name: t.name,
        permissions: t.permissions,
        flagPrefixes: t.flagPrefixes,
        ...(t.environment ? { environment: t.environment } : {}),
      }) as TokenPrincipal
      principals.set(t, principal)
    }
    return principal
  }

  return {
    authenticate(secret) {
      const revision = tokensRevision()
      let t = verified.get(secret, revision)
      // a verified secret still names that very row: anything else (revoked, changed) checks afresh
      if (t === undefined || store.committed().tokens.get(t.id) !== t) {
        verified.delete(secret)
        const hash = secret.length <= MAX_SECRET_LENGTH ? hashTokenSecret(secret) : ''
        t = hash === '' ? undefined : byHash(hash)
        // A lookup keyed by the hash tells an observer nothing about the secret; the final
        // comparison is constant-time anyway, as docs/api.md#tokens says.
        if (!t || !sameHash(t.secretHash, hash)) throw new UnauthorizedError('invalid or revoked API token')
        verified.set(secret, revision, t)
      }
      return principalOf(t)
    },

    principalById(tokenId) {
      const t = store.committed().tokens.get(tokenId)
      if (!t) throw new UnauthorizedError('invalid or revoked API token')
      return principalOf(t)
    },
  }
}
