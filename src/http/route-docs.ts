/**
 * OpenAPI `detail` for a route: summary, tag, the permission it needs (in words and as security),
 * the success response and the error responses it can give. Kept next to each route so the
 * document cannot forget one; `openapi-document.ts` turns these into a valid OpenAPI 3.0 document.
 */

import type { TSchema } from 'elysia'
import type { OpenAPIV3 } from 'openapi-types'
import type { Permission } from '../domain/permission.ts'

/** Who may call a route. */
export type Access = Permission | 'public' | 'login' | 'any-user'

/** What a route's documentation says. */
export interface RouteDoc {
  summary: string
  /** Stable name for client generators (a method name in generated clients). */
  operationId: string
  tag: string
  access: Access
  description?: string
  success: {
    status: number
    schema: TSchema | Record<string, unknown>
    description: string
    example?: unknown
    headers?: Record<string, string>
    /** Default `application/json`; event streams are `text/event-stream`. */
    contentType?: string
  }
  /** The request body's schema, for the document (the guard or the domain does the checking). */
  body?: TSchema | Record<string, unknown>
  /** False when the body may be left out (OFREP evaluations: no body means an empty context). */
  bodyRequired?: boolean
  /** A wildcard path segment documented as one `{name}` parameter that may contain `/`. */
  wildcard?: { name: string; description: string }
  /** Header parameters (e.g. If-Match). */
  headers?: { name: string; description: string }[]
  errors: number[]
  /** Non-error-envelope answers besides the success one (e.g. health's 503); no schema: no body (304). */
  other?: Record<number, { schema?: TSchema | Record<string, unknown>; description: string; example?: unknown }>
  /** A query the route reads but does not refuse others beside (OFREP tolerates unknown parameters). */
  query?: { name: string; description: string }[]
}

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid request (bad JSON, failed validation, unknown field or query parameter)',
  401: 'Missing, malformed, expired or revoked token (session or API token), or bad credentials',
  403: 'The token lacks the required permission, or the flag is outside its flagPrefixes',
  404: 'No such resource',
  405: 'Method not allowed on this path',
  409: 'Conflict with current state',
  412: 'If-Match does not match the current revision',
  413: 'Request body over the size limit',
  415: 'Request body is not declared as application/json, or is compressed (a Content-Encoding other than identity)',
  429: 'Too many failed logins; see Retry-After',
  500: 'A bug: a generic message, the cause is logged with the request id',
  502: 'The remote source could not be fetched',
  503: 'Storage failed; the service refuses writes until restarted',
}

function accessText(access: Access): string {
  switch (access) {
    case 'public':
      return 'No authentication.'
    case 'login':
      return 'No authentication (this is how a token is obtained).'
    case 'any-user':
      return 'Requires a valid session or API token; no permission needed.'
    default:
      return `Requires permission \`${access}\`.`
  }
}

/** Builds the Elysia `detail` object of a route. */
export function routeDoc(doc: RouteDoc) {
  const authed = doc.access !== 'public' && doc.access !== 'login'
  const errors = [...new Set([...doc.errors, ...(authed ? [401] : []), ...(doc.access.includes(':') ? [403] : [])])].sort()
  const responses: Record<string, unknown> = {
    [String(doc.success.status)]: {
      description: doc.success.description,
      ...(doc.success.headers
        ? {
            headers: Object.fromEntries(
              Object.entries(doc.success.headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }]),
            ),
          }
        : {}),
      content: {
        [doc.success.contentType ?? 'application/json']: {
          schema: doc.success.schema,
          ...(doc.success.example === undefined ? {} : { example: doc.success.example }),
        },
      },
    },
  }
  for (const status of errors) responses[String(status)] = { $ref: `#/components/responses/E${status}` }
  for (const [status, r] of Object.entries(doc.other ?? {})) {
    responses[status] =
      r.schema === undefined
        ? { description: r.description }
        : {
            description: r.description,
            content: { 'application/json': { schema: r.schema, ...(r.example === undefined ? {} : { example: r.example }) } },
          }
  }
  return {
    summary: doc.summary,
    operationId: doc.operationId,
    description: [accessText(doc.access), doc.description].filter(Boolean).join('\n\n'),
    tags: [doc.tag],
    security: (authed ? [{ bearerAuth: [] }, { apiKeyAuth: [] }] : []) as OpenAPIV3.SecurityRequirementObject[],
    responses: responses as unknown as OpenAPIV3.ResponsesObject,
    'x-flagd-permission': doc.access,
    ...(doc.body ? { 'x-body': doc.body, 'x-body-required': doc.bodyRequired ?? true } : {}),
    ...(doc.wildcard ? { 'x-wildcard': doc.wildcard } : {}),
    ...(doc.headers || doc.query
      ? {
          parameters: [
            ...(doc.headers ?? []).map(
              (h): OpenAPIV3.ParameterObject => ({
                name: h.name,
                in: 'header',
                required: false,
                description: h.description,
                schema: { type: 'string' },
              }),
            ),
            ...(doc.query ?? []).map(
              (q): OpenAPIV3.ParameterObject => ({
                name: q.name,
                in: 'query',
                required: false,
                description: q.description,
                schema: { type: 'string' },
              }),
            ),
          ],
        }
      : {}),
  }
}

/** The text of each documented error status. */
export function errorText(status: number): string {
  return ERROR_TEXT[status] ?? 'Error'
}
