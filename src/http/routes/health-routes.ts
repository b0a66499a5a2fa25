/** GET /health (docs/operations.md): 200 while writable, 503 `degraded` when writes are refused. */

import type { Health, HealthService } from '../../services/health-service.ts'
import type { OidcStatus } from '../../services/oidc-service.ts'
import { VERSION } from '../../version.ts'
import { jsonAnswer } from '../answers.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { NoQuery } from '../schemas/common-schemas.ts'
import { HealthSchema } from '../schemas/user-schemas.ts'

const VERSION_JSON = JSON.stringify(VERSION)
// the body of each health the service reported (it reports the same object until something changes):
// an edge encoding of no request data, kept because answering the same string is measurably cheaper
// than building it per answer (docs/performance.md)
const bodies = new WeakMap<Health, string>()

/**
 * The answer to `GET /health`; with single sign-on configured, `oidc` says whether its provider is
 * reachable (a provider that is not leaves the status as it is: password sign-in goes on).
 */
export function healthAnswer(health: HealthService, requestId: string, oidc?: () => OidcStatus): Response {
  const now = health.check()
  let body = bodies.get(now)
  if (body === undefined) {
    body = `{"status":"${now.writable ? 'ok' : 'degraded'}","version":${VERSION_JSON},"flags":${now.flags}}`
    bodies.set(now, body)
  }
  if (oidc) body = `${body.slice(0, -1)},"oidc":${JSON.stringify(oidc())}}`
  return jsonAnswer(requestId, body, now.writable ? 200 : 503)
}

/** The health route. */
export function healthRoutes(health: HealthService, oidc?: () => OidcStatus): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/health',
      authenticate: false,
      query: NoQuery,
      handle: (c) => healthAnswer(health, c.id, oidc),
      docs: {
        summary: 'Health check',
        operationId: 'getHealth',
        tag: 'operations',
        access: 'public',
        description: 'Answers 503 with status "degraded" when storage failed and writes are refused.',
        success: {
          status: 200,
          schema: HealthSchema,
          description: 'The service is up and writable',
          example: { status: 'ok', version: VERSION, flags: 42 },
        },
        errors: [400],
        other: { 503: { schema: HealthSchema, description: 'Storage failed: writes are refused until restart' } },
      },
    }),
  ]
}
