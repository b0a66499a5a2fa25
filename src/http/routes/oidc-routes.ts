/**
 * /api/auth/oidc (docs/single-sign-on.md): the web UI's single sign-on. `start` sends the browser to
 * the identity provider, `callback` takes it back and hands the UI a one-time code in the URL's
 * fragment (never a credential in a URL, never one in a cookie), `session` exchanges the code for
 * flagd's own session token. Every failure lands on the UI's sign-in page with a sentence, and is
 * logged with its reason.
 */

import { t } from 'elysia'
import { OidcFailure } from '../../services/oidc-failure.ts'
import type { OidcService } from '../../services/oidc-service.ts'
import { OIDC_COOKIE_CLEARED } from '../../services/oidc-service.ts'
import { customAnswer, jsonAnswer } from '../answers.ts'
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
          const { location, cookie } = await deps.oidc.start()
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
          // the flow cookie stays: the code's exchange must come with it (docs/single-sign-on.md#what-happens-at-sign-in)
          const code = await deps.oidc.callback(new URL(c.request.url), c.request.headers.get('cookie'))
          return back(c.id, `oidc-code=${code}`)
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
        const signedIn = await deps.oidc.exchange((c.body as { code: string }).code, c.request.headers.get('cookie'), c.id)
        // the flow cookie has done its work
        const answer = JSON.stringify(await loginAnswer(deps.sessionTokens, signedIn))
        return jsonAnswer(c.id, answer, 200, { 'set-cookie': OIDC_COOKIE_CLEARED })
      },
      docs: {
        summary: 'Exchange a sign-in code for a session',
        operationId: 'oidcSession',
        tag: 'auth',
        access: 'login',
        description:
          'Answers like POST /api/login; an unknown, used or expired code is 401, and so is a code without the cookie `start` set in the same browser (the sign-in is bound to it). Each code works once, for 60 s.',
        body: SessionBody,
        success: { status: 200, schema: LoginResponse, description: 'Token and the user it belongs to' },
        errors: [400, 401, 413, 415],
      },
    }),
  ]
}
