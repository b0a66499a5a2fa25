/**
 * The OpenID side of single sign-on (docs/single-sign-on.md): discovery of the provider, the
 * authorization URL, and the code grant that answers the person's claims, with `openid-client`
 * (OpenID Certified; it verifies the ID token's signature against the provider's keys
 * (non-repudiation checks on, though the token comes over TLS), its issuer, audience, expiry and nonce).
 */

import * as client from 'openid-client'
import type { OidcConfig } from '../config-oidc.ts'
import { OidcFailure, sentenceOf } from './oidc-failure.ts'
import { boundedFetch } from './oidc-fetch.ts'
import { claimOf } from './oidc-user-provisioning.ts'

/** What the browser's flow holds that the provider must see again (PKCE verifier, `state`, `nonce`). */
export interface OidcFlowSecrets {
  state: string
  verifier: string
  nonce: string
}

/** The provider as flagd speaks to it. */
export interface OidcClient {
  /** Whether discovery has succeeded, and if not, why the last attempt failed. */
  reached(): { ok: true } | { ok: false; problem: string | undefined }
  /** Fresh `state`, PKCE verifier and `nonce` for a flow. */
  newFlowSecrets(): OidcFlowSecrets
  /** The provider's authorization URL for this flow (`OidcFailure` when the provider cannot be reached). */
  authorizationUrl(flow: OidcFlowSecrets, redirectUri: string): Promise<URL>
  /** Redeems the code the provider sent back and answers the person's claims (userinfo fills what the ID token leaves out). */
  claimsOf(url: URL, flow: OidcFlowSecrets, redirectUri: string): Promise<Record<string, unknown>>
}

/** Creates the client; discovery starts at once when `discoverNow` (never waited for) and is retried on use until it succeeds. */
export function createOidcClient(cfg: OidcConfig, discoverNow: boolean): OidcClient {
  let discovered: client.Configuration | undefined
  let problem: string | undefined
  const issuerUrl = new URL(cfg.issuer)
  const insecure = issuerUrl.protocol === 'http:'

  const discover = async (): Promise<client.Configuration> => {
    if (discovered) return discovered
    try {
      discovered = await client.discovery(
        issuerUrl,
        cfg.clientId,
        cfg.clientSecret,
        undefined,
        // every answer of the provider is read at most up to a cap (oidc-fetch.ts)
        { ...(insecure ? { execute: [client.allowInsecureRequests] } : {}), timeout: 10, [client.customFetch]: boundedFetch() },
      )
      // the ID token's signature is checked against the provider's keys too, though it came over TLS
      client.enableNonRepudiationChecks(discovered)
      problem = undefined
      return discovered
    } catch (err) {
      problem = `discovery of ${cfg.issuer} failed: ${(err as Error).message}`
      throw new OidcFailure('The identity provider cannot be reached: try again later, or sign in with a password.', problem)
    }
  }
  // found out at start, never waited for: an unreachable provider does not hold the daemon up
  if (discoverNow) void discover().catch(() => {})

  return {
    reached: () => (discovered ? { ok: true } : { ok: false, problem }),

    newFlowSecrets: () => ({ state: client.randomState(), verifier: client.randomPKCECodeVerifier(), nonce: client.randomNonce() }),

    async authorizationUrl(flow, redirectUri) {
      const config = await discover()
      return client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: cfg.scopes,
        code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
        code_challenge_method: 'S256',
        state: flow.state,
        nonce: flow.nonce,
      })
    },

    async claimsOf(url, flow, redirectUri) {
      const config = await discover()
      let claims: Record<string, unknown>
      try {
        // the URL as the provider sent it back, at the configured address it was sent to
        const current = new URL(redirectUri)
        current.search = url.search
        const tokens = await client.authorizationCodeGrant(config, current, {
          pkceCodeVerifier: flow.verifier,
          expectedState: flow.state,
          expectedNonce: flow.nonce,
          idTokenExpected: true,
        })
        claims = { ...(tokens.claims() ?? {}) }
        const needed = [cfg.usernameClaim ?? 'preferred_username', cfg.groupsClaim]
        if (needed.some((c) => claimOf(claims, c) === undefined) && tokens.access_token && config.serverMetadata().userinfo_endpoint) {
          // what the ID token leaves out, userinfo may say (it checks the subject is the same)
          const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub as string)
          claims = { ...info, ...claims }
        }
      } catch (err) {
        if (err instanceof OidcFailure) throw err
        throw sentenceOf(err)
      }
      return claims
    },
  }
}
