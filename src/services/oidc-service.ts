/**
 * Single sign-on for the web UI (docs/single-sign-on.md): the authorization-code flow with PKCE,
 * `state` and `nonce` against the provider found by discovery (oidc-client.ts). The person becomes a
 * built-in user of source `oidc` (oidc-user-provisioning.ts); the UI receives flagd's own session
 * through a one-time code. The provider's own tokens are never accepted anywhere else.
 *
 * Between start and callback the browser carries `state`, the PKCE verifier and the nonce in a
 * short-lived, HttpOnly, path-limited cookie, signed with the daemon's secret, so any replica can
 * finish what another started. The one-time code names a pending session, stored like any other and
 * claimed once in a transaction (auth-service.ts), so any replica can exchange it too; it is bound
 * to the browser of that cookie, whose exchange must carry it (docs/single-sign-on.md#what-happens-at-sign-in).
 * The redirect URI comes from the configuration, never from a request.
 */

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { OidcConfig } from '../config-oidc.ts'
import type { Clock } from '../domain/clock.ts'
import { UnauthorizedError } from '../domain/errors.ts'
import { newId } from '../domain/new-id.ts'
import type { Store } from '../storage/store.ts'
import type { AuthService, LoginResult } from './auth-service.ts'
import { createOidcClient } from './oidc-client.ts'
import { OidcFailure } from './oidc-failure.ts'
import { provisionOidcUser } from './oidc-user-provisioning.ts'

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

/** The name of the cookie that carries a sign-in's flow from start to the code's exchange. */
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
  const { config: cfg, auth } = deps
  const redirectUri = 'uri' in deps.redirect ? deps.redirect.uri : undefined
  const misconfigured = 'problem' in deps.redirect ? deps.redirect.problem : undefined
  const now = deps.now
  const provider = createOidcClient(cfg, !misconfigured)

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

  return {
    label: cfg.label,
    status: () => {
      if (misconfigured) return { status: 'misconfigured', issuer: cfg.issuer, reason: misconfigured }
      const reached = provider.reached()
      return reached.ok
        ? { status: 'ok', issuer: cfg.issuer }
        : { status: 'unavailable', issuer: cfg.issuer, reason: reached.problem ?? 'not reached yet' }
    },

    async start() {
      if (redirectUri === undefined)
        throw new OidcFailure(
          'Single sign-on is misconfigured on this flagd (auth.oidc.redirectUri): sign in with a password, or ask an administrator.',
          misconfigured ?? 'no redirect URI',
        )
      const secrets = provider.newFlowSecrets()
      const flow: Flow = {
        state: secrets.state,
        verifier: secrets.verifier,
        nonce: secrets.nonce,
        browser: randomBytes(16).toString('base64url'),
        exp: now().getTime() + FLOW_SECONDS * 1000,
      }
      const location = await provider.authorizationUrl(flow, redirectUri)
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
      const claims = await provider.claimsOf(url, flow, redirectUri)
      const user = await provisionOidcUser(deps, claims)
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
