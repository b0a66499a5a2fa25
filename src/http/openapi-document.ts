/**
 * The OpenAPI 3.0 document of GET /api/openapi.json. `@elysiajs/openapi` generates the paths from
 * the routes' schemas and `detail`; this module completes what it leaves out or emits in 3.1 form:
 * request bodies (declared in each route's `detail`, since the app checks bodies itself and gives
 * Elysia no body schema), wildcard paths
 * as one `{name}` parameter that may contain `/`, response descriptions, the error responses, the
 * bearer scheme, and every schema rewritten to 3.0 by `toOpenApi30`.
 */

import { toOpenAPISchema } from '@elysiajs/openapi'
import type { AnyElysia } from 'elysia'
import { VERSION } from '../version.ts'
import { toOpenApi30 } from './openapi-schema.ts'
import { errorText } from './route-docs.ts'
import { ErrorSchema } from './schemas/common-schemas.ts'
import { flagComponents } from './schemas/flag-schemas.ts'

type Json = Record<string, unknown>

const ERROR_STATUSES = [400, 401, 403, 404, 409, 412, 413, 415, 429, 500, 502, 503]

/** One realistic answer per status, so example-driven tools and readers see what each means. */
const ERROR_EXAMPLES: Record<number, { code: string; message: string; details?: Json }> = {
  400: {
    code: 'INVALID_REQUEST',
    message: 'value 12 is above maxValue 10',
    details: { field: 'value', reason: '12 is above maxValue 10' },
  },
  401: { code: 'UNAUTHORIZED', message: 'invalid or expired token' },
  403: { code: 'FORBIDDEN', message: 'this action needs the flag:write permission', details: { required: 'flag:write' } },
  404: { code: 'NOT_FOUND', message: 'no flag named "app/unknown"' },
  409: { code: 'CONFLICT', message: 'flag app/max_retries already exists', details: { field: 'name' } },
  412: {
    code: 'PRECONDITION_FAILED',
    message: 'flag app/max_retries is at revision 5, not 4; read it again and retry',
    details: { revision: 5 },
  },
  413: { code: 'PAYLOAD_TOO_LARGE', message: 'request body is larger than the limit of 1048576 bytes', details: { limit: 1048576 } },
  415: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'request body must be JSON: send Content-Type: application/json' },
  429: { code: 'TOO_MANY_REQUESTS', message: 'too many failed logins; retry in 840 s', details: { retryAfter: 840 } },
  500: { code: 'INTERNAL', message: 'internal error; the request id identifies it in the log' },
  502: { code: 'UPSTREAM_ERROR', message: 'the remote answered 404, expected 200' },
  503: { code: 'UNAVAILABLE', message: 'storage is unavailable; the service is read-only until it is restarted' },
}
const ERROR_HEADERS: Record<number, Record<string, string>> = {
  401: { 'WWW-Authenticate': 'Always `Bearer`' },
  405: { Allow: 'Methods the path supports' },
  429: { 'Retry-After': 'Whole seconds to wait' },
}
const HIDDEN = [
  '/api/openapi.json',
  '/api/docs',
  '/api/docs/swagger-ui-bundle.js',
  '/api/docs/swagger-ui.css',
  '/',
  '/ui/',
  '/ui/assets/:file',
  '/ui/*',
]

interface RouteInfo {
  method: string
  path: string
  hooks: { detail?: { 'x-wildcard'?: { name: string; description: string }; 'x-body'?: unknown; 'x-body-required'?: boolean } }
}

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
}

/** Applies `toOpenApi30` to the schema of every media type of every response. */
function convertResponses(responses: Record<string, Json>): Record<string, Json> {
  const out: Record<string, Json> = {}
  for (const [status, response] of Object.entries(responses)) {
    const content = response.content as Record<string, Json> | undefined
    if (!content) {
      out[status] = response
      continue
    }
    const converted = Object.fromEntries(
      Object.entries(content).map(([type, media]) => [type, { ...media, schema: toOpenApi30(media.schema) }]),
    )
    out[status] = { ...response, content: converted }
  }
  return out
}

function errorResponses(): Json {
  const out: Json = {}
  for (const status of ERROR_STATUSES) {
    const headers = ERROR_HEADERS[status]
    out[`E${status}`] = {
      description: errorText(status),
      ...(headers
        ? { headers: Object.fromEntries(Object.entries(headers).map(([h, d]) => [h, { description: d, schema: { type: 'string' } }])) }
        : {}),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' }, example: { error: ERROR_EXAMPLES[status] } } },
    }
  }
  return out
}

/** Builds the document for an app (see module comment). */
export function buildOpenApiDocument(app: AnyElysia): Json {
  const generated = toOpenAPISchema(app, { paths: HIDDEN }, undefined, undefined, '3.0.3') as unknown as { paths: Record<string, Json> }
  const paths: Record<string, Json> = {}
  for (const route of app.routes as unknown as RouteInfo[]) {
    if (HIDDEN.includes(route.path)) continue
    const method = route.method.toLowerCase()
    const generatedKey = Object.keys(generated.paths).find((k) => k === openApiPath(route.path) || k === route.path)
    const op = { ...((generatedKey && (generated.paths[generatedKey]?.[method] as Json)) || {}) }
    const wildcard = route.hooks.detail?.['x-wildcard']
    let key = openApiPath(route.path)
    const parameters = ((op.parameters as Json[] | undefined) ?? []).filter((p) => p.name !== '*')
    if (wildcard) {
      key = key.replace('*', `{${wildcard.name}}`)
      parameters.unshift({
        name: wildcard.name,
        in: 'path',
        required: true,
        description: wildcard.description,
        schema: { type: 'string' },
        example: 'app/checkout/new_flow',
      })
    }
    if (parameters.length > 0) op.parameters = parameters.map((p) => ({ ...p, schema: toOpenApi30(p.schema) }))
    else delete op.parameters
    const body = route.hooks.detail?.['x-body']
    if (body) {
      op.requestBody = {
        required: route.hooks.detail?.['x-body-required'] !== false,
        content: { 'application/json': { schema: toOpenApi30(body) } },
      }
    } else delete op.requestBody
    delete op['x-body']
    delete op['x-body-required']
    // any operation can meet a bug: it answers the generic 500 envelope
    op.responses = { ...convertResponses((op.responses ?? {}) as Record<string, Json>), 500: { $ref: '#/components/responses/E500' } }
    delete op['x-wildcard']
    paths[key] = { ...paths[key], [method]: op }
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'flagd',
      version: VERSION,
      contact: { name: 'flagd maintainers (see the README of the flagd repository)' },
      description:
        'Self-hosted feature-flag service. Log in with POST /api/login and send the token as `Authorization: Bearer <token>`. ' +
        'Every error uses the envelope `{"error": {"code", "message", "details"}}`.',
    },
    // self-hosted for one team's applications and scripts: an internal API
    servers: [
      {
        url: '/',
        description:
          'This flagd daemon (local: the one serving this document; its environment, e.g. staging or production, is set in its config)',
        'x-internal': true,
      },
    ],
    tags: [
      { name: 'auth', description: 'Login, logout and the current user' },
      { name: 'users', description: 'The built-in user system' },
      { name: 'flags', description: 'Feature flags' },
      { name: 'sessions', description: 'Active login sessions' },
      { name: 'tokens', description: 'API tokens for applications, CI jobs and scripts' },
      { name: 'audit', description: 'Who changed what: the audit log and rollbacks' },
      {
        name: 'evaluation',
        description: 'Flag evaluation for applications: the OpenFeature Remote Evaluation Protocol (OFREP) and its change stream',
      },
      { name: 'migrations', description: 'Export and import of flags' },
      { name: 'operations', description: 'Health and metrics' },
    ],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Either a session token from POST /api/login: a JWT signed with HS256 (the algorithm is pinned on verification, as RFC8725 recommends), ' +
            'claims sub, sid, iat, exp, valid while its session exists; or an API token (fdt_…) from POST /api/tokens or `flagd token add`.',
        },
        apiKeyAuth: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'An API token (fdt_…), as an alternative to Authorization: Bearer. Session tokens are not accepted here.',
        },
      },
      schemas: {
        Error: toOpenApi30(ErrorSchema),
        ...Object.fromEntries(Object.entries(flagComponents()).map(([name, schema]) => [name, toOpenApi30(schema)])),
      },
      responses: errorResponses(),
    },
  }
}
