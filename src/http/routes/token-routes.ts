/** /api/tokens and /api/tokens/{tokenId} (docs/api.md#api-tokens). */

import { t } from 'elysia'
import type { ApiTokenService } from '../../services/api-token-service.ts'
import { jsonAnswer } from '../answers.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { DeletedById, NoQuery } from '../schemas/common-schemas.ts'
import { CreateTokenBody, CreateTokenBodyDoc, NewTokenSchema, TokenSchema } from '../schemas/token-schemas.ts'

/** Dependencies of the token routes. */
export interface TokenRouteDeps {
  apiTokens: ApiTokenService
  bodyLimit: number
}

const TokenIdParams = t.Object({ tokenId: t.String({ description: 'Token id', example: 'tok_J8m2ZqL0c5R1vW7nX3yPbA' }) })

/** The token routes. */
export function tokenRoutes(deps: TokenRouteDeps): RouteSpec[] {
  const { apiTokens } = deps
  return [
    route({
      method: 'GET',
      path: '/api/tokens',
      permission: 'token:read',
      query: NoQuery,
      handle: (c) => apiTokens.list(c.auth),
      docs: {
        summary: 'List API tokens',
        operationId: 'listTokens',
        tag: 'tokens',
        access: 'token:read',
        description: 'Sorted by name (code point order). Secrets are never shown again after creation.',
        success: { status: 200, schema: t.Array(TokenSchema), description: 'Every token, expired ones included' },
        errors: [400],
      },
    }),
    route({
      method: 'POST',
      path: '/api/tokens',
      permission: 'token:write',
      query: NoQuery,
      body: { limit: deps.bodyLimit, schema: CreateTokenBody },
      async handle(c) {
        const created = await apiTokens.create(c.caller, c.body)
        return jsonAnswer(c.id, JSON.stringify(created), 201, { location: `/api/tokens/${encodeURIComponent(created.id)}` })
      },
      docs: {
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
      },
    }),
    route({
      method: 'GET',
      path: '/api/tokens/:tokenId',
      permission: 'token:read',
      query: NoQuery,
      handle: (c) => apiTokens.get(c.auth, c.params.tokenId ?? ''),
      docs: {
        summary: 'Get an API token',
        operationId: 'getToken',
        tag: 'tokens',
        access: 'token:read',
        params: TokenIdParams,
        success: { status: 200, schema: TokenSchema, description: 'The token (no secret)' },
        errors: [400, 404],
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/tokens/:tokenId',
      permission: 'token:write',
      query: NoQuery,
      async handle(c) {
        const token = await apiTokens.revoke(c.caller, c.params.tokenId ?? '')
        return { deleted: true, id: token.id }
      },
      docs: {
        summary: 'Revoke an API token',
        operationId: 'deleteToken',
        tag: 'tokens',
        access: 'token:write',
        params: TokenIdParams,
        description: 'The token is refused from the very next request.',
        success: { status: 200, schema: DeletedById, description: 'The token was revoked' },
        errors: [400, 404, 503],
      },
    }),
  ]
}
