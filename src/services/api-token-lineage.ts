/**
 * API tokens made by tokens (docs/api.md#api-tokens): no escalation through a token, and a token's
 * offspring revoked with it.
 */

import { canSeeFlag, flagScopeOf } from '../domain/access-policy.ts'
import type { StoredToken } from '../domain/api-token.ts'
import { AppError } from '../domain/errors.ts'
import type { Principal } from '../domain/principal.ts'

/**
 * No escalation through a token: a token made by a token is confined to prefixes inside its
 * creator's and may not outlive it (permissions are checked against the creator by the caller).
 */
export function checkNarrower(
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
export function descendantsOf(tokens: ReadonlyMap<string, StoredToken>, id: string): string[] {
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
