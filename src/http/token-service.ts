/**
 * Signs and verifies access tokens with `@elysiajs/jwt` (HS256, algorithm pinned on verify), and
 * keeps a bounded cache of verified tokens so the hot path does not pay a signature check on every
 * request. The cache only saves the cryptography: session and user are still checked every time.
 */

import { jwt } from '@elysiajs/jwt'

/** The claims flagd puts in a token. */
export interface TokenClaims {
  sub: string
  sid: string
  exp: number
}

/** Token minting and checking. */
export interface TokenService {
  sign(userId: string, sessionId: string, expiresAt: Date): Promise<string>
  /** The claims of a valid, unexpired token, or `undefined`. */
  verify(token: string): Promise<TokenClaims | undefined>
}

const MAX_TOKEN_LENGTH = 4096

interface JwtFunctions {
  sign(payload: Record<string, string | number>): Promise<string>
  verify(token: string, options: { algorithms: string[] }): Promise<Record<string, unknown> | false>
}

/** Creates the token service over a secret; `cacheSize` bounds the verified-token cache. */
export function createTokenService(secret: string, cacheSize = 10_000, now: () => number = Date.now): TokenService {
  const plugin = jwt({ name: 'jwt', secret, alg: 'HS256' })
  // The plugin exposes sign/verify as a decorator; take it from the plugin so routes and guard share it.
  const signer = (plugin as unknown as { singleton: { decorator: { jwt: JwtFunctions } } }).singleton.decorator.jwt
  const cache = new Map<string, TokenClaims>()
  return {
    sign: (sub, sid, expiresAt) => signer.sign({ sub, sid, exp: Math.floor(expiresAt.getTime() / 1000) }),

    async verify(token) {
      if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) return undefined
      const nowSeconds = now() / 1000
      const cached = cache.get(token)
      if (cached) {
        if (cached.exp > nowSeconds) return cached
        cache.delete(token)
        return undefined
      }
      const payload = (await signer.verify(token, { algorithms: ['HS256'] })) as Record<string, unknown> | false
      if (!payload) return undefined
      const { sub, sid, exp } = payload
      if (typeof sub !== 'string' || typeof sid !== 'string' || typeof exp !== 'number' || exp <= nowSeconds) return undefined
      const claims: TokenClaims = { sub, sid, exp }
      if (cache.size >= cacheSize) {
        const oldest = cache.keys().next().value
        if (oldest !== undefined) cache.delete(oldest)
      }
      cache.set(token, claims)
      return claims
    },
  }
}
