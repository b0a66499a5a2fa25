/** /api/tokens and /api/tokens/{tokenId} (contract §12). */

import { Elysia, t } from 'elysia'
import type { ApiTokenService } from '../../services/api-token-service.ts'
import { type GuardDeps, guard } from '../auth-guard.ts'
import { jsonResponse } from '../json-response.ts'
import { callerOf, principalOf } from '../request-context.ts'
import { routeDoc } from '../route-docs.ts'
import { DeletedById, NoQuery } from '../schemas/common-schemas.ts'
import { CreateTokenBody, CreateTokenBodyDoc, NewTokenSchema, TokenSchema } from '../schemas/token-schemas.ts'

/** Dependencies of the token routes. */
export interface TokenRouteDeps extends GuardDeps {
  apiTokens: ApiTokenService
  bodyLimit: number
}

const TokenIdParams = t.Object({ tokenId: t.String({ description: 'Token id', example: 'tok_J8m2ZqL0c5R1vW7nX3yPbA' }) })

/** The token routes. */
export function tokenRoutes(deps: TokenRouteDeps) {
  const { apiTokens } = deps
  return new Elysia({ name: 'token-routes' })
    .get('/api/tokens', ({ request }) => apiTokens.list(principalOf(request)), {
      ...guard(deps, { permission: 'token:read' }),
      query: NoQuery,
      detail: routeDoc({
        summary: 'List API tokens',
        operationId: 'listTokens',
        tag: 'tokens',
        access: 'token:read',
        description: 'Sorted by name (code point order). Secrets are never shown again after creation.',
        success: { status: 200, schema: t.Array(TokenSchema), description: 'Every token, expired ones included' },
        errors: [400],
      }),
    })
    .post(
      '/api/tokens',
      async ({ body, request }) => {
        const created = await apiTokens.create(callerOf(request), body)
        return jsonResponse(request, JSON.stringify(created), 201, { location: `/api/tokens/${encodeURIComponent(created.id)}` })
      },
      {
        ...guard(deps, { permission: 'token:write', bodyLimit: deps.bodyLimit, schema: CreateTokenBody }),
        query: NoQuery,
        detail: routeDoc({
          summary: 'Create an API token',
          operationId: 'createToken',
          tag: 'tokens',
          access: 'token:write',
          description:
            'The answer holds the secret (`token`) once; only its SHA-256 hash is stored. A token never holds a permission its creator lacks (403 naming it); a token made by a scoped or expiring token stays inside its prefixes and expiry.',
          body: CreateTokenBodyDoc,
          success: {
            status: 201,
            schema: NewTokenSchema,
            description: 'The new token and its secret',
            headers: { Location: 'URL of the new token' },
          },
          errors: [400, 409, 413, 415, 503],
        }),
      },
    )
    .get('/api/tokens/:tokenId', ({ params, request }) => apiTokens.get(principalOf(request), params.tokenId), {
      ...guard(deps, { permission: 'token:read' }),
      params: TokenIdParams,
      query: NoQuery,
      detail: routeDoc({
        summary: 'Get an API token',
        operationId: 'getToken',
        tag: 'tokens',
        access: 'token:read',
        success: { status: 200, schema: TokenSchema, description: 'The token (no secret)' },
        errors: [400, 404],
      }),
    })
    .delete(
      '/api/tokens/:tokenId',
      async ({ params, request }) => {
        const token = await apiTokens.revoke(callerOf(request), params.tokenId)
        return { deleted: true, id: token.id }
      },
      {
        ...guard(deps, { permission: 'token:write' }),
        params: TokenIdParams,
        query: NoQuery,
        detail: routeDoc({
          summary: 'Revoke an API token',
          operationId: 'deleteToken',
          tag: 'tokens',
          access: 'token:write',
          description: 'The token is refused from the very next request.',
          success: { status: 200, schema: DeletedById, description: 'The token was revoked' },
          errors: [400, 404, 503],
        }),
      },
    )
}
