/**
 * Single sign-on for the web UI (docs/single-sign-on.md): the authorization-code flow with PKCE,
 * `state` and `nonce` against the provider found by discovery, with `openid-client` (OpenID
 * Certified; it verifies the ID token's signature against the provider's keys (non-repudiation
 * checks on, though the token comes over TLS), its issuer, audience, expiry and nonce). The person becomes a built-in user of source `oidc`, matched by
 * issuer and subject, whose permissions (and flag prefixes) come from their groups at every sign-in;
 * the UI receives flagd's own session through a one-time code. The provider's own tokens are never
 * accepted anywhere else.
 *
 * Between start and callback the browser carries `state`, the PKCE verifier and the nonce in a
 * short-lived, HttpOnly, path-limited cookie, signed with the daemon's secret, so any replica can
 * finish what another started. The one-time code names a pending session, stored like any other and
 * claimed once in a transaction (auth-service.ts), so any replica can exchange it too; it is bound
 * to the browser of that cookie, whose exchange must carry it (docs/single-sign-on.md#what-happens-at-sign-in).
 * The redirect URI comes from the configuration, never from a request.
 */

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import * as client from 'openid-client'
import type { OidcConfig } from '../config-oidc.ts'
import { normalizeFlagPrefixes } from '../domain/api-token.ts'
import type { Clock } from '../domain/clock.ts'
import { UnauthorizedError } from '../domain/errors.ts'
import { newId } from '../domain/new-id.ts'
import { normalizePermissions } from '../domain/permission.ts'
import { systemPrincipal } from '../domain/principal.ts'
import { checkUsername, type StoredUser } from '../domain/user.ts'
import type { Store } from '../storage/store.ts'
import type { AuthService, LoginResult } from './auth-service.ts'
import { commitMeta } from './commit-meta.ts'
import { OidcFailure, sentenceOf } from './oidc-failure.ts'
import { boundedFetch } from './oidc-fetch.ts'
import { findUserByName } from './user-service.ts'

/** Where the provider stands, for `/health`. */
export interface OidcStatus {
  status: 'ok' | 'unavailable' | 'misconfigured'
  issuer: string
  reason?: string
}

/** The single sign-on use cases. */
export interface OidcService {
  readonly label: string
  status(): OidcStatus
  /** Where to send the browser, and the cookie to set (`OidcFailure` when the provider cannot be reached). */
  start(): Promise<{ location: string; cookie: string }>
  /** Finishes the flow the provider sent back to; answers a one-time code for the UI, bound to this browser's cookie. */
  callback(url: URL, cookieHeader: string | null): Promise<string>
  /** Exchanges a one-time code for a flagd session (`401` for an unknown, used or expired one, or one from another browser). */
  exchange(code: string, cookieHeader: string | null, requestId: string): Promise<LoginResult>
}

export const OIDC_COOKIE = 'flagd_oidc'
/** The `Set-Cookie` that removes the flow cookie (once its code is exchanged). */
export const OIDC_COOKIE_CLEARED = `${OIDC_COOKIE}=; Path=/api/auth/oidc; Max-Age=0; HttpOnly; SameSite=Lax`
const COOKIE_PATH = '/api/auth/oidc'
const FLOW_SECONDS = 600

/** What the flow cookie carries from start to callback and on to the code's exchange; `browser` binds the code. */
interface Flow {
  state: string
  verifier: string
  nonce: string
  browser: string
  exp: number
}

/** A claim the token or userinfo itself holds (never an object's built-in property of that name). */
const claimOf = (claims: Record<string, unknown>, name: string): unknown => (Object.hasOwn(claims, name) ? claims[name] : undefined)

/**
 * Creates the service; `secret` signs the flow cookie and the codes; `redirect` is the configured
 * redirect URI, or why there is none (then only `/health` and a sentence at start speak of it).
 */
export function createOidcService(deps: {
  config: OidcConfig
  store: Store
  auth: AuthService
  secret: string
  redirect: { uri: string } | { problem: string }
  now: Clock
}): OidcService {
  const { config: cfg, store, auth } = deps
  const redirectUri = 'uri' in deps.redirect ? deps.redirect.uri : undefined
  const misconfigured = 'problem' in deps.redirect ? deps.redirect.problem : undefined
  const now = deps.now
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
  if (!misconfigured) void discover().catch(() => {})

  const sign = (payload: string) => createHmac('sha256', deps.secret).update(`flagd oidc flow\n${payload}`).digest('base64url')

  /** The flow the browser's cookie carries, checked. */
  const flowOf = (cookieHeader: string | null): Flow => {
    const raw = cookieHeader
      ?.split(';')
      .map((c) => c.trim())
      .find((c) => c.startsWith(`${OIDC_COOKIE}=`))
      ?.slice(OIDC_COOKIE.length + 1)
    const [body, mac] = raw?.split('.') ?? []
    const fail = () => new OidcFailure('This sign-in was not started here, or took too long: sign in again.', 'no or bad flow cookie')
    if (!body || !mac) throw fail()
    const expected = Buffer.from(sign(body))
    const given = Buffer.from(mac)
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw fail()
    const flow = JSON.parse(Buffer.from(body, 'base64url').toString()) as Flow
    if (flow.exp < now().getTime() || typeof flow.browser !== 'string') throw fail()
    return flow
  }

  /** The user this person is, made or brought up to date from their claims. */
  const userOf = async (claims: Record<string, unknown>): Promise<StoredUser> => {
    const subject = claims.sub
    const name =
      cfg.usernameClaim !== undefined
        ? claimOf(claims, cfg.usernameClaim)
        : (claimOf(claims, 'preferred_username') ?? claimOf(claims, 'email'))
    if (typeof subject !== 'string' || subject === '')
      throw new OidcFailure('The identity provider did not say who you are (no subject).', 'missing claim sub')
    if (typeof name !== 'string' || name === '')
      throw new OidcFailure(
        `The identity provider did not send your username (${cfg.usernameClaim ?? 'preferred_username or email'}).`,
        'missing username claim',
      )
    try {
      checkUsername(name)
    } catch {
      throw new OidcFailure(`Your username from the identity provider, ${JSON.stringify(name)}, is not one flagd can use.`, 'bad username')
    }
    const listed = claimOf(claims, cfg.groupsClaim)
    const groups = Array.isArray(listed) ? listed.filter((g): g is string => typeof g === 'string') : []
    // a map: a group named "constructor" or "__proto__" is only a name (docs/single-sign-on.md#configuration)
    const grants = groups.flatMap((g) => cfg.groupPermissions.get(g) ?? [])
    const environments = store.committed().environments
    let permissions: StoredUser['permissions']
    let flagPrefixes: string[]
    try {
      permissions = normalizePermissions(
        [...cfg.defaultPermissions, ...grants.flatMap((g) => g?.permissions ?? [])],
        'groupPermissions',
        (e) => environments.has(e),
      )
      // the union of the groups' prefixes; one group that confines no one confines nobody
      const unconfined = grants.length === 0 || grants.some((g) => g?.flagPrefixes === undefined || g.flagPrefixes.length === 0)
      flagPrefixes = unconfined ? [] : normalizeFlagPrefixes([...new Set(grants.flatMap((g) => g?.flagPrefixes ?? []))])
    } catch (err) {
      throw new OidcFailure('flagd’s single sign-on is misconfigured (group permissions): ask an administrator.', (err as Error).message)
    }
    const at = now().toISOString()
    const { result } = await store.transact(commitMeta({ principal: systemPrincipal('sso'), requestId: newId('sso') }), (tx) => {
      const known = [...tx.read.users.values()].find((u) => u.oidc?.issuer === cfg.issuer && u.oidc.subject === subject)
      const holder = findUserByName(tx.read, name)
      if (holder && holder.id !== known?.id)
        throw new OidcFailure(
          `The username ${name} belongs to another flagd user: ask an administrator to rename one of you.`,
          `username clash with ${holder.id}`,
        )
      const user: StoredUser = {
        id: known?.id ?? newId('usr'),
        username: name,
        passwordHash: '',
        permissions,
        ...(flagPrefixes.length > 0 ? { flagPrefixes } : {}),
        source: 'oidc',
        oidc: { issuer: cfg.issuer, subject },
        createdAt: known?.createdAt ?? at,
        updatedAt: at,
      }
      const same = known && JSON.stringify({ ...known, updatedAt: '' }) === JSON.stringify({ ...user, updatedAt: '' })
      if (!same) tx.put('users', user)
      return same ? (known as StoredUser) : user
    })
    return result
  }

  return {
    label: cfg.label,
    status: () => {
      if (misconfigured) return { status: 'misconfigured', issuer: cfg.issuer, reason: misconfigured }
      return discovered
        ? { status: 'ok', issuer: cfg.issuer }
        : { status: 'unavailable', issuer: cfg.issuer, reason: problem ?? 'not reached yet' }
    },

    async start() {
      if (redirectUri === undefined)
        throw new OidcFailure(
          'Single sign-on is misconfigured on this flagd (auth.oidc.redirectUri): sign in with a password, or ask an administrator.',
          misconfigured ?? 'no redirect URI',
        )
      const config = await discover()
      const verifier = client.randomPKCECodeVerifier()
      const flow: Flow = {
        state: client.randomState(),
        verifier,
        nonce: client.randomNonce(),
        browser: randomBytes(16).toString('base64url'),
        exp: now().getTime() + FLOW_SECONDS * 1000,
      }
      const location = client.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: cfg.scopes,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state: flow.state,
        nonce: flow.nonce,
      })
      const body = Buffer.from(JSON.stringify(flow)).toString('base64url')
      const secure = redirectUri.startsWith('https:') ? '; Secure' : ''
      const cookie = `${OIDC_COOKIE}=${body}.${sign(body)}; Path=${COOKIE_PATH}; Max-Age=${FLOW_SECONDS}; HttpOnly; SameSite=Lax${secure}`
      return { location: location.href, cookie }
    },

    async callback(url, cookieHeader) {
      const providerError = url.searchParams.get('error')
      if (providerError !== null)
        throw new OidcFailure(
          `The identity provider refused the sign-in (${providerError}).`,
          `provider error ${providerError}: ${url.searchParams.get('error_description') ?? ''}`,
        )
      const flow = flowOf(cookieHeader)
      if (redirectUri === undefined)
        throw new OidcFailure('Single sign-on is misconfigured on this flagd.', misconfigured ?? 'no redirect URI')
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
      const user = await userOf(claims)
      // a pending session, stored (so any replica can claim it), named by a signed code
      const { session } = await auth.openSession(user, newId('sso'))
      // signed together with this browser's flow: only the browser that started the sign-in can exchange it
      const payload = `${session.id}.${randomBytes(16).toString('base64url')}`
      return `${payload}.${sign(`code ${payload} ${flow.browser}`)}`
    },

    async exchange(code, cookieHeader, requestId) {
      const refused = () => new UnauthorizedError('this sign-in code is unknown, used, expired or from another browser: sign in again')
      let browser: string
      try {
        browser = flowOf(cookieHeader).browser
      } catch {
        throw refused()
      }
      const [sessionId, nonce, mac] = code.split('.')
      const expected = Buffer.from(sign(`code ${sessionId}.${nonce} ${browser}`))
      const given = Buffer.from(mac ?? '')
      if (!sessionId || !nonce || expected.length !== given.length || !timingSafeEqual(expected, given)) throw refused()
      return auth.claimSession(sessionId, requestId)
    },
  }
}
