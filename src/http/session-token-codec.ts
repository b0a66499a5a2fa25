/**
 * Signs and verifies session tokens (docs/api.md#authentication): JWT HS256 with `jose`, the algorithm pinned on
 * verification, claims `sub`, `sid`, `iat`, `exp`. `jose` is what `@elysiajs/jwt` wraps; flagd calls
 * it directly because tokens are verified in the auth guard (and kept in a cache), not inside a
 * route handler where the plugin's decorator lives. Verified tokens are kept in the request cache
 * (docs/architecture.md#caching) until they expire, which spares the hot path a signature check on
 * every request; it saves only the cryptography: session and user are still checked every time.
 */

import { jwtVerify, SignJWT } from 'jose'
import type { RequestCache } from '../domain/request-cache.ts'

/** The claims flagd puts in a token. */
export interface TokenClaims {
  sub: string
  sid: string
  exp: number
}

/** Token minting and checking. */
export interface SessionTokenCodec {
  /** A token issued at `issuedAt` (one reading of the clock with `expiresAt`'s, so `exp - iat` is the lifetime exactly). */
  sign(userId: string, sessionId: string, issuedAt: Date, expiresAt: Date): Promise<string>
  /** The claims of a valid, unexpired token, or `undefined`. */
  verify(token: string): Promise<TokenClaims | undefined>
  /** The claims of a token verified before and still unexpired, without a signature check; else `undefined`. */
  known(token: string): TokenClaims | undefined
}

const MAX_TOKEN_LENGTH = 4096

// a signature checked is checked for good: entries hold no revision, only the token's expiry
const SIGNED = 0

/** Creates the token service over a secret; verified tokens are kept in `cache` (a small one of its own by default). */
export function createSessionTokenCodec(secret: string, cache: RequestCache, now: () => number): SessionTokenCodec {
  const key = new TextEncoder().encode(secret)
  const verified = cache.region<TokenClaims>('verified-sessions', (c) => 2 * (c.sub.length + c.sid.length) + 32)
  return {
    sign: (sub, sid, issuedAt, expiresAt) =>
      new SignJWT({ sid })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(sub)
        .setIssuedAt(Math.floor(issuedAt.getTime() / 1000))
        .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
        .sign(key),

    known: (token) => verified.get(token, SIGNED, now()),

    async verify(token) {
      if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return undefined
      const nowSeconds = now() / 1000
      const cached = verified.get(token, SIGNED, now())
      if (cached) return cached
      let payload: Record<string, unknown>
      try {
        payload = (await jwtVerify(token, key, { algorithms: ['HS256'], currentDate: new Date(now()) })).payload
      } catch {
        return undefined
      }
      const { sub, sid, exp } = payload
      if (typeof sub !== 'string' || typeof sid !== 'string' || typeof exp !== 'number' || exp <= nowSeconds) return undefined
      const claims: TokenClaims = { sub, sid, exp }
      verified.set(token, SIGNED, claims, exp * 1000)
      return claims
    },
  }
}
