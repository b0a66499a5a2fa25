/**
 * API tokens (docs/api.md#api-tokens): made, listed and revoked by principals holding `token:*`, and turned
 * back into a principal on every request that presents one. A secret is hashed and looked up in an
 * index of the committed tokens, rebuilt only when the tokens table changes, so a request that uses
 * a token costs one SHA-256 and a map lookup; revocation and expiry hold from the very next request
 * because the index always reflects the committed snapshot.
 */

import { canSeeFlag, flagScopeOf, holds, requirePermission } from '../domain/access-policy.ts'
import {
  checkTokenName,
  hashTokenSecret,
  isTokenExpired,
  type NewToken,
  newTokenSecret,
  normalizeExpiry,
  normalizeFlagPrefixes,
  type PublicToken,
  type StoredToken,
  sameHash,
  toPublicToken,
} from '../domain/api-token.ts'
import type { Clock } from '../domain/clock.ts'
import { compareCodePoints } from '../domain/code-point-order.ts'
import { AppError, ConflictError, ForbiddenError, InvalidError, NotFoundError, UnauthorizedError } from '../domain/errors.ts'
import { requireJsonObject } from '../domain/json-object.ts'
import { newId } from '../domain/new-id.ts'
import { normalizePermissions, splitPermission } from '../domain/permission.ts'
import { actorOf, type Caller, type Principal, type TokenPrincipal } from '../domain/principal.ts'
import type { RequestCache } from '../domain/request-cache.ts'
import { unknownFieldReason } from '../domain/spelling-suggestion.ts'
import type { Store } from '../storage/store.ts'
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
const LAST_USED_PRECISION_MS = 60_000
const MAX_SECRET_LENGTH = 256

/**
 * No escalation through a token: a token made by a token is confined to prefixes inside its
 * creator's and may not outlive it (permissions are checked against the creator by the caller).
 */
function checkNarrower(
  p: Principal,
  prefixes: readonly string[],
  expiresAt: string | null,
  creatorExpiry: string | null,
  act: 'create' | 'revoke' = 'create',
): void {
  const verb = act === 'create' ? 'a token it creates must be too' : 'it can revoke only such tokens'
  const scope = flagScopeOf(p)
  if (scope.length > 0) {
    const wider = prefixes.length === 0 ? '(every flag)' : prefixes.find((prefix) => !canSeeFlag(p, prefix))
    if (wider !== undefined) {
      throw new AppError('FORBIDDEN', `this token is confined to ${scope.join(', ')}; ${verb} (${wider} is not)`, {
        field: 'flagPrefixes',
      })
    }
  }
  if (creatorExpiry !== null && (expiresAt === null || expiresAt > creatorExpiry)) {
    const what = act === 'create' ? 'a token it creates may not outlive it' : 'it cannot revoke a token that outlives it'
    throw new AppError('FORBIDDEN', `this token expires at ${creatorExpiry}; ${what}`, { field: 'expiresAt' })
  }
}

/** The ids of every token made by token `id`, by those tokens, and so on. */
function descendantsOf(tokens: ReadonlyMap<string, StoredToken>, id: string): string[] {
  const out: string[] = []
  const parents = [id]
  while (parents.length > 0) {
    const parent = parents.pop() as string
    for (const t of tokens.values()) {
      if (t.createdBy.type === 'token' && t.createdBy.id === parent && !out.includes(t.id)) {
        out.push(t.id)
        parents.push(t.id)
      }
    }
  }
  return out
}

/**
 * Creates the service; verified secrets are kept in `cache`; `environment`: the default one (a token
 * confined to none evaluates it).
 */
export function createApiTokenService(store: Store, now: Clock, cache: RequestCache, environment: string): ApiTokenService {
  let index = new Map<string, StoredToken>()
  let indexedAt = -1
  const principals = new WeakMap<StoredToken, TokenPrincipal>()
  const lastTouch = new WeakMap<StoredToken, number>()
  const defaultEnvironment = () => environment
  // Secrets already checked, and the row each one matched: the hot path skips the hash. Kept in the
  // request cache for the tokens' revision, holding only secrets that clients sent anyway
  const verified = cache.region<StoredToken>('verified-api-tokens', () => 256)
  const tokensRevision = () => store.committed().revisionOf('tokens')

  const byHash = (hash: string): StoredToken | undefined => {
    const snapshot = store.committed()
    const at = snapshot.revisionOf('tokens')
    if (at !== indexedAt) {
      index = new Map([...snapshot.tokens.values()].map((t) => [t.secretHash, t]))
      indexedAt = at
    }
    return index.get(hash)
  }
  const shown = (t: StoredToken) => toPublicToken(t, store.lastUsed('tokens', t))
  const stored = (tokenId: string) => {
    const t = store.committed().tokens.get(tokenId)
    if (!t) throw new NotFoundError(`no token with id ${JSON.stringify(tokenId)}`)
    return t
  }

  /** The principal of a committed token row: refused when expired; its use is noted (in memory). */
  const principalOf = (t: StoredToken): TokenPrincipal => {
    const at = now().getTime()
    if (isTokenExpired(t, at)) throw new UnauthorizedError(`API token ${t.name} expired at ${t.expiresAt}`)
    const used = lastTouch.get(t)
    if (used === undefined || at - used >= LAST_USED_PRECISION_MS) {
      store.touch('tokens', t.id, new Date(at).toISOString())
      lastTouch.set(t, at)
    }
    let principal = principals.get(t)
    if (!principal) {
      principal = Object.freeze({
        kind: 'token',
        tokenId: t.id,
        name: t.name,
        permissions: t.permissions,
        flagPrefixes: t.flagPrefixes,
        ...(t.environment ? { environment: t.environment } : {}),
      }) as TokenPrincipal
      principals.set(t, principal)
    }
    return principal
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

    authenticate(secret) {
      const revision = tokensRevision()
      let t = verified.get(secret, revision)
      // a verified secret still names that very row: anything else (revoked, changed) checks afresh
      if (t === undefined || store.committed().tokens.get(t.id) !== t) {
        verified.delete(secret)
        const hash = secret.length <= MAX_SECRET_LENGTH ? hashTokenSecret(secret) : ''
        t = hash === '' ? undefined : byHash(hash)
        // A lookup keyed by the hash tells an observer nothing about the secret; the final
        // comparison is constant-time anyway, as docs/api.md#tokens says.
        if (!t || !sameHash(t.secretHash, hash)) throw new UnauthorizedError('invalid or revoked API token')
        verified.set(secret, revision, t)
      }
      return principalOf(t)
    },

    principalById(tokenId) {
      const t = store.committed().tokens.get(tokenId)
      if (!t) throw new UnauthorizedError('invalid or revoked API token')
      return principalOf(t)
    },

    me: (principal) => shown(stored(principal.tokenId)),
  }
}
