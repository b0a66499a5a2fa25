/** POST /api/login, POST /api/logout, GET /api/me (docs/api.md#authentication). */

import { type Static, t } from 'elysia'
import { UnauthorizedError } from '../../domain/errors.ts'
import type { ApiTokenService } from '../../services/api-token-service.ts'
import type { AuthService, LoginResult } from '../../services/auth-service.ts'
import type { UserService } from '../../services/user-service.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { DeletedById, NoQuery } from '../schemas/common-schemas.ts'
import { TokenSchema } from '../schemas/token-schemas.ts'
import { LoginBody, LoginResponse, UserSchema } from '../schemas/user-schemas.ts'
import type { SessionTokenCodec } from '../session-token-codec.ts'

/** Dependencies of the auth routes. */
export interface AuthRouteDeps {
  auth: AuthService
  users: UserService
  sessionTokens: SessionTokenCodec
  apiTokens: ApiTokenService
  bodyLimit: number
}

/**
 * A login body over 64 KiB can only carry an over-long username or password (1,024 characters
 * written as escaped surrogate pairs take 13 KiB): a bad credential, answered at once from the
 * declared length without reading it, so a flood of 1 MB passwords costs no memory (docs/api.md#authentication).
 */
const LOGIN_BODY = { bytes: 64 * 1024, error: () => new UnauthorizedError('invalid username or password') }

/** What a sign-in answers (POST /api/login, and single sign-on's code exchange): the session as a token, who, until when. */
export async function loginAnswer(sessionTokens: SessionTokenCodec, { session, user, issuedAt }: LoginResult) {
  const token = await sessionTokens.sign(user.id, session.id, issuedAt, new Date(session.expiresAt))
  return { token, user: { id: user.id, username: user.username, permissions: user.permissions }, expiresAt: session.expiresAt }
}

/** The authentication routes. */
export function authRoutes(deps: AuthRouteDeps): RouteSpec[] {
  return [
    route({
      method: 'POST',
      path: '/api/login',
      authenticate: false,
      query: NoQuery,
      body: { limit: deps.bodyLimit, schema: LoginBody, small: LOGIN_BODY },
      async handle(c) {
        const { username, password } = c.body as Static<typeof LoginBody>
        return loginAnswer(deps.sessionTokens, await deps.auth.login(username, password, c.address, c.id))
      },
      docs: {
        summary: 'Log in and get a token',
        operationId: 'login',
        tag: 'auth',
        access: 'login',
        body: LoginBody,
        description: 'Failed logins are throttled per username and per client address (429 with Retry-After).',
        success: { status: 200, schema: LoginResponse, description: 'Token and the user it belongs to' },
        errors: [400, 401, 413, 415, 429, 503],
      },
    }),
    route({
      method: 'POST',
      path: '/api/logout',
      query: NoQuery,
      handle: async (c) => ({ deleted: true, id: await deps.auth.logout(c.caller) }),
      docs: {
        summary: "End the caller's own session",
        operationId: 'logout',
        tag: 'auth',
        access: 'any-user',
        description: 'Session tokens only: an API token has no session (403); revoke it instead.',
        success: { status: 200, schema: DeletedById, description: 'The session ended' },
        errors: [400, 403, 503],
      },
    }),
    route({
      method: 'GET',
      path: '/api/me',
      query: NoQuery,
      handle(c) {
        const caller = c.auth
        return caller.kind === 'token' ? deps.apiTokens.me(caller) : deps.users.me(caller)
      },
      docs: {
        summary: 'The caller: its user, or its API token',
        operationId: 'getMe',
        tag: 'auth',
        access: 'any-user',
        description: 'With a session token, the user; with an API token, the token resource (never its secret).',
        success: { status: 200, schema: t.Union([UserSchema, TokenSchema]), description: 'The caller' },
        errors: [400],
      },
    }),
  ]
}
