/**
 * Signs and verifies session tokens (docs/api.md#authentication): JWT HS256 with `jose`, the algorithm pinned on
 * verification, claims `sub`, `sid`, `iat`, `exp`. `jose` is what `@elysiajs/jwt` wraps; flagd calls
 * it directly because tokens are verified in the auth guard (and kept in a cache), not inside a
 * route handler where the plugin's decorator lives. A bounded cache of verified tokens spares the
 * hot path a signature check on every request; it saves only the cryptography: session and user
 * are still checked every time.
 */

import { jwtVerify, SignJWT } from 'jose'
import { BoundedMap } from '../domain/bounded-map.ts'

/** The claims flagd puts in a token. */
export interface TokenClaims {
  sub: string
  sid: string
  exp: number
}

/** Token minting and checking. */
export interface SessionTokenCodec {
  sign(userId: string, sessionId: string, expiresAt: Date): Promise<string>
  /** The claims of a valid, unexpired token, or `undefined`. */
  verify(token: string): Promise<TokenClaims | undefined>
  /** The claims of a token verified before and still unexpired, without a signature check; else `undefined`. */
  known(token: string): TokenClaims | undefined
}

const MAX_TOKEN_LENGTH = 4096

/** Creates the token service over a secret; `cacheSize` bounds the verified-token cache. */
export function createSessionTokenCodec(secret: string, cacheSize = 10_000, now: () => number = Date.now): SessionTokenCodec {
  const key = new TextEncoder().encode(secret)
  const cache = new BoundedMap<string, TokenClaims>(cacheSize)
  return {
    sign: (sub, sid, expiresAt) =>
      new SignJWT({ sid })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(sub)
        .setIssuedAt(Math.floor(now() / 1000))
        .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
        .sign(key),

    known(token) {
      const cached = cache.get(token)
      return cached !== undefined && cached.exp > now() / 1000 ? cached : undefined
    },

    async verify(token) {
      if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return undefined
      const nowSeconds = now() / 1000
      const cached = cache.get(token)
      if (cached) {
        if (cached.exp > nowSeconds) return cached
        cache.delete(token)
        return undefined
      }
      let payload: Record<string, unknown>
      try {
        payload = (await jwtVerify(token, key, { algorithms: ['HS256'], currentDate: new Date(now()) })).payload
      } catch {
        return undefined
      }
      const { sub, sid, exp } = payload
      if (typeof sub !== 'string' || typeof sid !== 'string' || typeof exp !== 'number' || exp <= nowSeconds) return undefined
      const claims: TokenClaims = { sub, sid, exp }
      cache.set(token, claims)
      return claims
    },
  }
}
