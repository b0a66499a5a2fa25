/**
 * /api/auth/oidc (docs/single-sign-on.md): the web UI's single sign-on. `start` sends the browser to
 * the identity provider, `callback` takes it back and hands the UI a one-time code in the URL's
 * fragment (never a credential in a URL, never one in a cookie), `session` exchanges the code for
 * flagd's own session token. Every failure lands on the UI's sign-in page with a sentence, and is
 * logged with its reason.
 */

import { t } from 'elysia'
import type { OidcService } from '../../services/oidc-service.ts'
import { OidcFailure } from '../../services/oidc-service.ts'
import { customAnswer } from '../answers.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { NoQuery } from '../schemas/common-schemas.ts'
import { LoginResponse } from '../schemas/user-schemas.ts'
import type { SessionTokenCodec } from '../session-token-codec.ts'
import { loginAnswer } from './auth-routes.ts'

/** Dependencies of the single sign-on routes. */
export interface OidcRouteDeps {
  oidc: OidcService | undefined
  sessionTokens: SessionTokenCodec
  bodyLimit: number
  log: (reason: string) => void
}

const SessionBody = t.Object({ code: t.String({ description: 'The one-time code of the callback' }) }, { additionalProperties: false })

/** The origin a request came to (the redirect URI is built from it). */
const originOf = (request: Request) => new URL(request.url).origin

/** The documented answer of a route that only redirects the browser (an empty body). */
const redirect = (description: string, location: string) => ({
  status: 302,
  schema: { type: 'string', maxLength: 0 },
  contentType: 'text/plain',
  description,
  headers: { Location: location },
})

/** The single sign-on routes (always there: without `auth.oidc`, `start` says so). */
export function oidcRoutes(deps: OidcRouteDeps): RouteSpec[] {
  const back = (id: string, fragment: string, extra: Record<string, string> = {}) =>
    customAnswer(id, null, 302, { location: `/ui/#${fragment}`, 'cache-control': 'no-store', ...extra })
  const failed = (id: string, err: unknown) => {
    const failure = err instanceof OidcFailure ? err : new OidcFailure('Single sign-on failed: sign in again.', String(err))
    deps.log(failure.reason)
    return back(id, `oidc-error=${encodeURIComponent(failure.sentence)}`)
  }
  return [
    route({
      method: 'GET',
      path: '/api/auth/oidc',
      authenticate: false,
      query: NoQuery,
      handle: () => ({ enabled: deps.oidc !== undefined, ...(deps.oidc ? { label: deps.oidc.label } : {}) }),
      docs: {
        summary: 'Whether single sign-on is offered',
        operationId: 'getOidc',
        tag: 'auth',
        access: 'public',
        description: 'What the sign-in page shows: a button named `label` when the daemon has an identity provider.',
        success: {
          status: 200,
          schema: t.Object({ enabled: t.Boolean(), label: t.Optional(t.String()) }),
          description: 'Whether, and the button',
        },
        errors: [400],
      },
    }),
    route({
      method: 'GET',
      path: '/api/auth/oidc/start',
      authenticate: false,
      query: NoQuery,
      async handle(c) {
        if (!deps.oidc) return back(c.id, `oidc-error=${encodeURIComponent('Single sign-on is not configured on this flagd.')}`)
        try {
          const { location, cookie } = await deps.oidc.start(originOf(c.request))
          return customAnswer(c.id, null, 302, { location, 'set-cookie': cookie, 'cache-control': 'no-store' })
        } catch (err) {
          return failed(c.id, err)
        }
      },
      docs: {
        summary: 'Start a single sign-on',
        operationId: 'startOidc',
        tag: 'auth',
        access: 'public',
        description:
          'Redirects to the identity provider (authorization code with PKCE, state and nonce); on failure back to /ui/#oidc-error=<sentence>.',
        success: redirect('To the identity provider, or back to the UI with a sentence', 'Where to'),
        errors: [400],
      },
    }),
    route({
      method: 'GET',
      path: '/api/auth/oidc/callback',
      authenticate: false,
      query: t.Object({}, { additionalProperties: true }),
      async handle(c) {
        if (!deps.oidc) return back(c.id, `oidc-error=${encodeURIComponent('Single sign-on is not configured on this flagd.')}`)
        try {
          const code = await deps.oidc.callback(new URL(c.request.url), originOf(c.request), c.request.headers.get('cookie'))
          // the flow cookie has done its work
          return back(c.id, `oidc-code=${code}`, { 'set-cookie': 'flagd_oidc=; Path=/api/auth/oidc; Max-Age=0; HttpOnly; SameSite=Lax' })
        } catch (err) {
          return failed(c.id, err)
        }
      },
      docs: {
        summary: 'Finish a single sign-on',
        operationId: 'oidcCallback',
        tag: 'auth',
        access: 'public',
        description:
          'Where the identity provider sends the browser back: to /ui/#oidc-code=<one-time code>, or /ui/#oidc-error=<sentence>.',
        success: redirect('Back to the UI', 'The UI, with the code or the sentence in the fragment'),
        errors: [400],
      },
    }),
    route({
      method: 'POST',
      path: '/api/auth/oidc/session',
      authenticate: false,
      query: NoQuery,
      body: { limit: deps.bodyLimit, schema: SessionBody },
      async handle(c) {
        if (!deps.oidc) return back(c.id, 'oidc-error')
        return loginAnswer(deps.sessionTokens, await deps.oidc.exchange((c.body as { code: string }).code, c.id))
      },
      docs: {
        summary: 'Exchange a sign-in code for a session',
        operationId: 'oidcSession',
        tag: 'auth',
        access: 'login',
        description: 'Answers like POST /api/login; an unknown, used or expired code is 401. Each code works once, for 60 s.',
        body: SessionBody,
        success: { status: 200, schema: LoginResponse, description: 'Token and the user it belongs to' },
        errors: [400, 401, 413, 415],
      },
    }),
  ]
}
