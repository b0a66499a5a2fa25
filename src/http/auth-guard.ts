/**
 * The guard every protected route spreads into its options. It runs in Elysia's `transform` stage,
 * before body validation, so the order of answers is: route (404/405) → token (401) → permission
 * (403) → body (415/413/400) → validation (400). It also reads the JSON body itself, because the
 * app's global parser defers parsing until the caller is known.
 */

import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { TSchema } from 'elysia'
import { requirePermission, requireUnscoped } from '../domain/access-policy.ts'
import { TOKEN_PREFIX } from '../domain/api-token.ts'
import { AppError, UnauthorizedError } from '../domain/errors.ts'
import type { Permission } from '../domain/permission.ts'
import type { Principal } from '../domain/principal.ts'
import type { ApiTokenService } from '../services/api-token-service.ts'
import type { AuthService } from '../services/auth-service.ts'
import { readJsonBody, type SmallBodyLimit } from './body-reader.ts'
import { problemMessage, validationProblem } from './error-handler.ts'
import { metaOf } from './request-context.ts'
import type { SessionTokenCodec } from './session-token-codec.ts'

/** What the guard needs. */
export interface GuardDeps {
  sessionTokens: SessionTokenCodec
  auth: AuthService
  apiTokens: ApiTokenService
}

/** Guard options: the permission needed (none: any logged-in user) and, for body routes, the limit. */
export interface GuardOptions {
  permission?: Permission
  bodyLimit?: number
  /** False for routes that need no token but still read a JSON body (login). */
  authenticate?: boolean
  /** A permission check that depends on the path (e.g. "your own user, or user:write"). */
  authorize?: (principal: Principal, params: Record<string, string>) => void
  /**
   * The route's body schema. Bodies are checked here, with TypeBox, and nowhere else: routes do not
   * hand the schema to Elysia, whose validation-error formatter throws on values such as
   * `{"toString": false}` and would turn a client mistake into a 500.
   */
  schema?: TSchema
  /** Routes that act on every flag (migrations): a token confined to flagPrefixes is refused (403). */
  unscoped?: boolean
  /** A smaller limit for bodies that are always small when valid (login), answered with its own error. */
  smallBody?: SmallBodyLimit
}

type TransformContext = { request: Request; body: unknown; params?: unknown }

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
 * Authenticates the request and records its principal; throws 401 when that fails. A credential this
 * process does not know may have been created on another replica a moment ago (a login there, then
 * this request through the load balancer): the store catches up once before the answer is 401.
 */
export async function authenticateRequest(deps: GuardDeps, request: Request): Promise<void> {
  const credential = presentedCredential(request.headers)
  // API tokens are told from session JWTs by their prefix (a JWT starts with "eyJ"): no parse, no guess
  if (credential.startsWith(TOKEN_PREFIX)) {
    const found = orAfterCatchingUp(deps, () => deps.apiTokens.authenticate(credential))
    metaOf(request).principal = found instanceof Promise ? await found : found
    return
  }
  const claims = await deps.sessionTokens.verify(credential)
  if (!claims) throw new UnauthorizedError('invalid or expired token')
  const found = orAfterCatchingUp(deps, () => deps.auth.resolve(claims.sub, claims.sid))
  metaOf(request).principal = found instanceof Promise ? await found : found
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
 * credentials, a first sight, a revoked one), which the full pipeline then answers. For the fast lanes.
 */
export function knownCredential(deps: GuardDeps, headers: Headers): KnownCredential | undefined {
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
function orAfterCatchingUp<T>(deps: GuardDeps, find: () => T): T | Promise<T> {
  try {
    return find()
  } catch (err) {
    if (!(err instanceof UnauthorizedError)) throw err
    return deps.auth.refreshCredentials().then(find)
  }
}

/** Builds the `transform` hook for a route (see module comment). */
export function guard(deps: GuardDeps, options: GuardOptions = {}) {
  const checker = options.schema ? TypeCompiler.Compile(options.schema) : undefined
  return {
    // An arrow function, not a method: Elysia's Sucrose reads hook source to infer what they use,
    // and the minified method form (`async transform(s){…}`) made it print a warning in the binary.
    transform: async (ctx: TransformContext): Promise<void> => {
      if (options.authenticate !== false) {
        await authenticateRequest(deps, ctx.request)
        // The services decide again with the same policy; checking here first answers 403 before the body is read.
        const principal = metaOf(ctx.request).principal
        if (options.permission && principal) requirePermission(principal, options.permission)
        if (options.unscoped && principal) requireUnscoped(principal)
        if (options.authorize && principal) options.authorize(principal, (ctx.params ?? {}) as Record<string, string>)
      }
      if (options.bodyLimit !== undefined) ctx.body = await readJsonBody(ctx.request, options.bodyLimit, options.smallBody)
      if (checker && !checker.Check(ctx.body)) {
        const problem = validationProblem([...checker.Errors(ctx.body)].slice(0, 1), 'body')
        throw new AppError('INVALID_REQUEST', problemMessage(problem), { ...problem })
      }
    },
  }
}
