/**
 * Who a request's credential stands for: `Authorization: Bearer` with a session JWT or an API token,
 * or an API token in `X-API-Key`. The pipeline calls it for every route behind authentication; a
 * credential seen before is answered from memory without waiting (`knownCredential`).
 */

import { TOKEN_PREFIX } from '../domain/api-token.ts'
import { UnauthorizedError } from '../domain/errors.ts'
import type { Principal } from '../domain/principal.ts'
import type { ApiTokenService } from '../services/api-token-service.ts'
import type { AuthService } from '../services/auth-service.ts'
import type { SessionTokenCodec } from './session-token-codec.ts'

/** What authentication needs. */
export interface AuthDeps {
  sessionTokens: SessionTokenCodec
  auth: AuthService
  apiTokens: ApiTokenService
}

const BEARER = /^Bearer[ \t]+([A-Za-z0-9._~+/-]+=*)[ \t]*$/i
const API_KEY = /^[ \t]*([A-Za-z0-9._~+/-]+=*)[ \t]*$/

/**
 * The credential a request presents: `Authorization: Bearer <session JWT or API token>`, or an API
 * token in `X-API-Key`. Both headers at once must carry the same token (a proxy adding one is fine;
 * two different credentials are ambiguous and refused).
 */
function presentedCredential(headers: Headers): string {
  const header = headers.get('authorization')
  const apiKey = headers.get('x-api-key')
  let bearer: string | undefined
  if (header !== null) {
    bearer = BEARER.exec(header)?.[1]
    if (!bearer) throw new UnauthorizedError('malformed Authorization header: expected Bearer <token>')
  }
  if (apiKey === null) {
    if (bearer === undefined)
      throw new UnauthorizedError('missing credentials: send Authorization: Bearer <token>, or X-API-Key: <API token>')
    return bearer
  }
  const key = API_KEY.exec(apiKey)?.[1]
  if (!key?.startsWith(TOKEN_PREFIX)) throw new UnauthorizedError(`malformed X-API-Key header: expected an API token (${TOKEN_PREFIX}…)`)
  if (bearer !== undefined && bearer !== key)
    throw new UnauthorizedError('Authorization and X-API-Key carry different credentials; send one')
  return key
}

/**
 * The principal of a request's credential headers; throws 401 when there is none or it is not valid.
 * A credential this process does not know may have been created on another replica a moment ago (a
 * login there, then this request through the load balancer): the store catches up once before the
 * answer is 401.
 */
export async function authenticate(deps: AuthDeps, headers: Headers): Promise<Principal> {
  const credential = presentedCredential(headers)
  // API tokens are told from session JWTs by their prefix (a JWT starts with "eyJ"): no parse, no guess
  if (credential.startsWith(TOKEN_PREFIX)) return orAfterCatchingUp(deps, () => deps.apiTokens.authenticate(credential))
  const claims = await deps.sessionTokens.verify(credential)
  if (!claims) throw new UnauthorizedError('invalid or expired token')
  return orAfterCatchingUp(deps, () => deps.auth.resolve(claims.sub, claims.sid))
}

/** A credential this process already knows, and what it stands for. */
export interface KnownCredential {
  principal: Principal
  /** For a session token: when the token itself expires (ms since the epoch). */
  tokenExpiresAt?: number
}

/**
 * The principal of a request whose credential this process already knows (an API token, or a session
 * token verified before), found without waiting; `undefined` for anything else (no or malformed
 * credentials, a first sight, a revoked one), which `authenticate` then answers.
 */
export function knownCredential(deps: AuthDeps, headers: Headers): KnownCredential | undefined {
  try {
    const credential = presentedCredential(headers)
    if (credential.startsWith(TOKEN_PREFIX)) return { principal: deps.apiTokens.authenticate(credential) }
    const claims = deps.sessionTokens.known(credential)
    return claims && { principal: deps.auth.resolve(claims.sub, claims.sid), tokenExpiresAt: claims.exp * 1000 }
  } catch {
    return undefined
  }
}

/** `find()`, or on a 401 `find()` again once the store has caught up (no promise on the hot path). */
function orAfterCatchingUp<T>(deps: AuthDeps, find: () => T): T | Promise<T> {
  try {
    return find()
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err
    return deps.auth.refreshCredentials().then(find)
  }
}
