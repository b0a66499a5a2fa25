/**
 * The OpenAPI operation of a route: summary, tag, the permission it needs (in words and as security),
 * its parameters (from the route's path and query schema), body, the success response and the error
 * responses it can give. Written next to each route so the document cannot forget one;
 * `openapi-document.ts` gathers them into the OpenAPI 3.0 document.
 */

import type { TObject, TSchema } from '@sinclair/typebox'
import type { OpenAPIV3 } from 'openapi-types'
import type { Permission } from '../domain/permission.ts'
import { toOpenApi30 } from './openapi-schema.ts'
import type { RouteSpec } from './route-spec.ts'

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
  /** Media types the body may also be sent as, besides `application/json` (YAML and TOML files of other tools). */
  bodyTypes?: { type: string; description: string }[]
  /**
   * A wildcard path segment documented as one `{name}` parameter that may contain `/`; `suffix` is a
   * fixed end the handler strips (`/evaluate` after a flag name).
   */
  wildcard?: { name: string; description: string; suffix?: string }
  /** Header parameters (e.g. If-Match). */
  headers?: { name: string; description: string }[]
  errors: number[]
  /** Non-error-envelope answers besides the success one (e.g. health's 503); no schema: no body (304). */
  other?: Record<number, { schema?: TSchema | Record<string, unknown>; description: string; example?: unknown; contentType?: string }>
  /** A query the route reads but does not refuse others beside (OFREP tolerates unknown parameters). */
  query?: { name: string; description: string }[]
  /** The path's `:name` parameters, with descriptions and examples. */
  params?: TObject
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

const stringParameter = (name: string, where: 'header' | 'query', description: string): OpenAPIV3.ParameterObject => ({
  name,
  in: where,
  required: false,
  description,
  schema: { type: 'string' },
})

/**
 * The parameters of a route, in the order the document lists them: the path's (its wildcard as one
 * `{name}` that may contain `/`, or its `:name` segments), the query schema's, then documented
 * headers and query parameters the route reads without a schema.
 */

/** A route's request body: JSON by its schema, and the other media types it takes as text (docs/migrations.md#from-other-tools). */
function requestBodyOf(doc: RouteDoc, body: NonNullable<RouteDoc['body']>) {
  const content: Record<string, unknown> = { 'application/json': { schema: toOpenApi30(body) } }
  for (const { type, description } of doc.bodyTypes ?? []) content[type] = { schema: { type: 'string', description } }
  return { required: doc.bodyRequired ?? true, content }
}

function parametersOf(spec: RouteSpec, doc: RouteDoc): unknown[] {
  const out: unknown[] = []
  if (doc.wildcard) {
    out.push({
      name: doc.wildcard.name,
      in: 'path',
      required: true,
      description: doc.wildcard.description,
      schema: { type: 'string' },
      example: 'app/checkout/new_flow',
    })
  }
  for (const match of spec.path.matchAll(/:([A-Za-z0-9_]+)/g)) {
    const name = match[1] as string
    out.push({ name, in: 'path', required: true, schema: toOpenApi30(doc.params?.properties[name] ?? { type: 'string' }) })
  }
  const query = spec.query
  if (query) {
    const required = new Set(query.required ?? [])
    for (const [name, schema] of Object.entries(query.properties))
      out.push({ name, in: 'query', required: required.has(name), schema: toOpenApi30(schema) })
  }
  for (const h of doc.headers ?? []) out.push(stringParameter(h.name, 'header', h.description))
  for (const q of doc.query ?? []) out.push(stringParameter(q.name, 'query', q.description))
  return out
}

/** The OpenAPI 3.0 operation of a documented route. */
export function operationOf(spec: RouteSpec & { docs: RouteDoc }): Record<string, unknown> {
  const doc = spec.docs
  const authed = doc.access !== 'public' && doc.access !== 'login'
  const errors = [...new Set([...doc.errors, ...(authed ? [401] : []), ...(doc.access.includes(':') ? [403] : [])])].sort()
  const media = (schema: unknown, example: unknown) => ({ schema: toOpenApi30(schema), ...(example === undefined ? {} : { example }) })
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
      content: { [doc.success.contentType ?? 'application/json']: media(doc.success.schema, doc.success.example) },
    },
  }
  for (const status of errors) responses[String(status)] = { $ref: `#/components/responses/E${status}` }
  for (const [status, r] of Object.entries(doc.other ?? {})) {
    responses[status] =
      r.schema === undefined
        ? { description: r.description }
        : { description: r.description, content: { [r.contentType ?? 'application/json']: media(r.schema, r.example) } }
  }
  // any operation can meet a bug: it answers the generic 500 envelope
  responses['500'] = { $ref: '#/components/responses/E500' }
  const parameters = parametersOf(spec, doc)
  return {
    summary: doc.summary,
    operationId: doc.operationId,
    description: [accessText(doc.access), doc.description].filter(Boolean).join('\n\n'),
    tags: [doc.tag],
    security: authed ? [{ bearerAuth: [] }, { apiKeyAuth: [] }] : [],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(doc.body ? { requestBody: requestBodyOf(doc, doc.body) } : {}),
    responses,
    'x-flagd-permission': doc.access,
  }
}

/** The text of each documented error status. */
export function errorText(status: number): string {
  return ERROR_TEXT[status] ?? 'Error'
}
