/**
 * The OpenAPI 3.0 document of GET /api/openapi.json, from the same route declarations the pipeline
 * serves: each documented route's operation (`route-docs.ts`), the shared error responses with an
 * example each, the two security schemes, and the flag schemas, every schema in the 3.0 dialect
 * (`toOpenApi30`). Routes without `docs` (the UI, the explorer, the fallbacks) are left out.
 */

import { VERSION } from '../version.ts'
import { toOpenApi30 } from './openapi-schema.ts'
import { errorText, operationOf, type RouteDoc } from './route-docs.ts'
import { documentedPath, type RouteSpec } from './route-spec.ts'
import { ErrorSchema } from './schemas/common-schemas.ts'
import { flagComponents, segmentComponents } from './schemas/flag-schemas.ts'
import { guardComponents } from './schemas/guard-schemas.ts'
import { usageComponents } from './schemas/usage-schemas.ts'

type Json = Record<string, unknown>

const hasDocs = (spec: RouteSpec): spec is RouteSpec & { docs: RouteDoc } => spec.docs !== undefined

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

/** Builds the document from the app's routes (see module comment). */
export function buildOpenApiDocument(routes: readonly RouteSpec[]): Json {
  const paths: Record<string, Json> = {}
  for (const spec of routes) {
    if (!hasDocs(spec)) continue
    const key = documentedPath(spec)
    paths[key] = { ...paths[key], [spec.method.toLowerCase()]: operationOf(spec) }
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
      { name: 'segments', description: 'Reusable conditions for targeting rules ($ref)' },
      { name: 'environments', description: 'The environments one daemon holds (development, staging, production…)' },
      { name: 'change-requests', description: 'Changes of an environment’s flag states, reviewed, scheduled and applied' },
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
        ...Object.fromEntries(
          Object.entries({ ...flagComponents(), ...segmentComponents(), ...usageComponents(), ...guardComponents() }).map(
            ([name, schema]) => [name, toOpenApi30(schema)],
          ),
        ),
      },
      responses: errorResponses(),
    },
  }
}
