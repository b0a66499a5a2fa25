/**
 * An OpenID provider that misbehaves on purpose, for the sign-in failures a certified one never
 * commits: its token endpoint answers an ID token signed with a key it does not publish, issued for
 * another client or by another issuer, or already expired; or its userinfo answer never ends.
 * Discovery and its published keys are in order.
 */

import { exportJWK, generateKeyPair, SignJWT } from 'jose'

/** How the ID token is wrong. */
export type Misdeed = 'foreign-key' | 'other-audience' | 'other-issuer' | 'expired' | 'endless-userinfo'

/** The running provider; `nonce` is the one the next ID token carries (the test reads it from the authorization URL). */
export interface RogueProvider {
  issuer: string
  misdeed: Misdeed
  nonce: string
  stop(): void
}

export async function startRogueProvider(clientId: string): Promise<RogueProvider> {
  const published = await generateKeyPair('RS256')
  const foreign = await generateKeyPair('RS256')
  const jwk = { ...(await exportJWK(published.publicKey)), kid: 'published', alg: 'RS256', use: 'sig' }
  const state: RogueProvider = { issuer: '', misdeed: 'foreign-key', nonce: '', stop: () => server.stop(true) }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const path = new URL(req.url).pathname
      if (path === '/.well-known/openid-configuration')
        return Response.json({
          issuer: state.issuer,
          authorization_endpoint: `${state.issuer}/auth`,
          token_endpoint: `${state.issuer}/token`,
          jwks_uri: `${state.issuer}/jwks`,
          userinfo_endpoint: `${state.issuer}/userinfo`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
        })
      if (path === '/jwks') return Response.json({ keys: [jwk] })
      if (path === '/userinfo') {
        if (state.misdeed !== 'endless-userinfo') return Response.json({ sub: 'u-mallory', groups: [] })
        // a JSON document that never ends: only a reader that stops counting bytes gets out
        const chunk = new TextEncoder().encode(`"${'x'.repeat(65_534)}",`)
        const body = new ReadableStream<Uint8Array>({
          start: (c) => c.enqueue(new TextEncoder().encode('{"sub":"u-mallory","padding":[')),
          pull: (c) => c.enqueue(chunk),
        })
        return new Response(body, { headers: { 'content-type': 'application/json' } })
      }
      if (path === '/token') {
        const now = Math.floor(Date.now() / 1000)
        const expired = state.misdeed === 'expired'
        const token = await new SignJWT({ nonce: state.nonce, preferred_username: 'mallory' })
          .setProtectedHeader({ alg: 'RS256', kid: 'published' })
          .setIssuer(state.misdeed === 'other-issuer' ? 'https://another-provider.example' : state.issuer)
          .setSubject('u-mallory')
          .setAudience(state.misdeed === 'other-audience' ? 'another-app' : clientId)
          .setIssuedAt(expired ? now - 7200 : now)
          .setExpirationTime(expired ? now - 3600 : now + 300)
          .sign(state.misdeed === 'foreign-key' ? foreign.privateKey : published.privateKey)
        return Response.json({ access_token: 'rogue-access', token_type: 'Bearer', expires_in: 300, id_token: token })
      }
      return new Response('not found', { status: 404 })
    },
  })
  state.issuer = `http://127.0.0.1:${server.port}`
  return state
}
