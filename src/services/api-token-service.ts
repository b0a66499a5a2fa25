/**
 * API tokens (docs/api.md#api-tokens): made, listed and revoked by principals holding `token:*`, and turned
 * back into a principal on every request that presents one (api-token-authenticator.ts, the hot path).
 */

import { holds, requirePermission } from '../domain/access-policy.ts'
import {
  checkTokenName,
  hashTokenSecret,
  type NewToken,
  newTokenSecret,
  normalizeExpiry,
  normalizeFlagPrefixes,
  type PublicToken,
  type StoredToken,
  toPublicToken,
} from '../domain/api-token.ts'
import type { Clock } from '../domain/clock.ts'
import { compareCodePoints } from '../domain/code-point-order.ts'
import { AppError, ConflictError, ForbiddenError, InvalidError, NotFoundError } from '../domain/errors.ts'
import { requireJsonObject } from '../domain/json-object.ts'
import { newId } from '../domain/new-id.ts'
import { normalizePermissions, splitPermission } from '../domain/permission.ts'
import { actorOf, type Caller, type Principal, type TokenPrincipal } from '../domain/principal.ts'
import type { RequestCache } from '../domain/request-cache.ts'
import { unknownFieldReason } from '../domain/spelling-suggestion.ts'
import type { Store } from '../storage/store.ts'
import { createApiTokenAuthenticator } from './api-token-authenticator.ts'
import { checkNarrower, descendantsOf } from './api-token-lineage.ts'
import { commitMeta } from './commit-meta.ts'

/** The API token use cases. */
export interface ApiTokenService {
  create(caller: Caller, input: unknown): Promise<NewToken>
  list(principal: Principal): PublicToken[]
  get(principal: Principal, tokenId: string): PublicToken
  /** Deletes the token; it is refused from the next request on. Returns it as it was. */
  revoke(caller: Caller, tokenId: string): Promise<PublicToken>
  /** The token a CLI user means by `ref`: its id, else its name. */
  find(ref: string): PublicToken | undefined
  /** The principal behind a presented secret; throws `UnauthorizedError` when unknown, revoked or expired. */
  authenticate(secret: string): TokenPrincipal
  /** The principal of a token by id, checked afresh (stream tickets and open streams); 401 when gone or expired. */
  principalById(tokenId: string): TokenPrincipal
  /** The caller's own token, as `GET /api/me` shows it. */
  me(principal: TokenPrincipal): PublicToken
}

const FIELDS = new Set(['name', 'permissions', 'expiresAt', 'flagPrefixes', 'environment'])

/**
 * Creates the service; verified secrets are kept in `cache`; `environment`: the default one (a token
 * confined to none evaluates it).
 */
export function createApiTokenService(store: Store, now: Clock, cache: RequestCache, environment: string): ApiTokenService {
  const authenticator = createApiTokenAuthenticator(store, now, cache)
  const defaultEnvironment = () => environment
  const shown = (t: StoredToken) => toPublicToken(t, store.lastUsed('tokens', t))
  const stored = (tokenId: string) => {
    const t = store.committed().tokens.get(tokenId)
    if (!t) throw new NotFoundError(`no token with id ${JSON.stringify(tokenId)}`)
    return t
  }

  return {
    async create(caller, input) {
      const creator = caller.principal
      requirePermission(creator, 'token:write')
      const body = requireJsonObject(input)
      const unknown = Object.keys(body).find((k) => !FIELDS.has(k))
      if (unknown !== undefined) {
        const reason = unknownFieldReason(unknown, FIELDS)
        throw new InvalidError(`unknown field ${JSON.stringify(unknown)}${reason.slice('unknown field'.length)}`, unknown, reason)
      }
      const name = checkTokenName(body.name)
      if (!Array.isArray(body.permissions) || !body.permissions.every((p) => typeof p === 'string')) {
        throw new InvalidError(
          'permissions must be an array of permission names',
          'permissions',
          body.permissions === undefined ? 'required' : 'must be an array of strings',
        )
      }
      const environments = store.committed().environments
      const permissions = normalizePermissions(body.permissions, 'permissions', (e) => environments.has(e))
      const missing = permissions.find((p) => !holds(creator, p))
      if (missing !== undefined) throw new ForbiddenError(missing)
      const flagPrefixes = normalizeFlagPrefixes(body.flagPrefixes)
      const environment = body.environment ?? null
      if (environment !== null && (typeof environment !== 'string' || !environments.has(environment)))
        throw new InvalidError(`no environment named ${JSON.stringify(environment)}`, 'environment', 'unknown environment')
      // a token evaluates one environment: a permission for another one would be a door it never uses
      const elsewhere = permissions.find((p) => {
        const at = splitPermission(p)[1]
        return at !== undefined && at !== (environment ?? defaultEnvironment())
      })
      if (elsewhere !== undefined)
        throw new InvalidError(
          `a token of environment ${environment ?? defaultEnvironment()} may hold only permissions that include it; ${elsewhere} does not`,
          'permissions',
          `${elsewhere} is for another environment`,
        )
      const at = now()
      const expiresAt = normalizeExpiry(body.expiresAt, at.getTime())
      checkNarrower(
        creator,
        flagPrefixes,
        expiresAt,
        creator.kind === 'token' ? (store.committed().tokens.get(creator.tokenId)?.expiresAt ?? null) : null,
      )
      const secret = newTokenSecret()
      const row: StoredToken = {
        id: newId('tok'),
        name,
        secretHash: hashTokenSecret(secret),
        permissions,
        flagPrefixes,
        ...(environment !== null ? { environment } : {}),
        createdAt: at.toISOString(),
        createdBy: actorOf(creator),
        expiresAt,
        lastUsedAt: null,
      }
      await store.transact(commitMeta(caller), (tx) => {
        for (const t of tx.read.tokens.values())
          if (t.name === name) throw new ConflictError(`a token named ${JSON.stringify(name)} already exists`, { field: 'name' })
        tx.put('tokens', row)
      })
      return { token: secret, ...toPublicToken(row) }
    },

    list(principal) {
      requirePermission(principal, 'token:read')
      return [...store.committed().tokens.values()].sort((a, b) => compareCodePoints(a.name, b.name)).map(shown)
    },

    get(principal, tokenId) {
      requirePermission(principal, 'token:read')
      return shown(stored(tokenId))
    },

    async revoke(caller, tokenId) {
      const p = caller.principal
      requirePermission(p, 'token:write')
      const out = await store.transact(commitMeta(caller), (tx) => {
        const t = tx.read.tokens.get(tokenId)
        if (!t) throw new NotFoundError(`no token with id ${JSON.stringify(tokenId)}`)
        // a token revokes only what it could have created (never a wider, longer-lived or stronger one)
        if (p.kind === 'token' && p.tokenId !== t.id) {
          const missing = t.permissions.find((x) => !holds(p, x))
          if (missing !== undefined)
            throw new AppError('FORBIDDEN', `this token cannot revoke ${t.name}, which holds ${missing} and this token does not`, {
              required: missing,
            })
          checkNarrower(p, t.flagPrefixes, t.expiresAt, tx.read.tokens.get(p.tokenId)?.expiresAt ?? null, 'revoke')
        }
        // and the tokens it created go with it, and theirs: a leaked token's offspring must not outlive it
        for (const id of descendantsOf(tx.read.tokens, t.id)) tx.delete('tokens', id)
        tx.delete('tokens', tokenId)
        return t
      })
      return shown(out.result)
    },

    find(ref) {
      const tokens = store.committed().tokens
      const t = tokens.get(ref) ?? [...tokens.values()].find((x) => x.name === ref)
      return t && shown(t)
    },

    authenticate: (secret) => authenticator.authenticate(secret),
    principalById: (tokenId) => authenticator.principalById(tokenId),

    me: (principal) => shown(stored(principal.tokenId)),
  }
}
