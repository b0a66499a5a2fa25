/** GET /metrics: Prometheus text, no token (like /health); absent when metrics are off. */

import { t } from 'elysia'
import { customAnswer } from '../answers.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { NoQuery } from '../schemas/common-schemas.ts'

/** The metrics route over a renderer, or no route at all. */
export function metricsRoutes(metrics: { contentType: string; render(): Promise<string> } | undefined): RouteSpec[] {
  if (!metrics) return []
  return [
    route({
      method: 'GET',
      path: '/metrics',
      authenticate: false,
      query: NoQuery,
      handle: async (c) => customAnswer(c.id, await metrics.render(), 200, { 'content-type': metrics.contentType }),
      docs: {
        summary: 'Prometheus metrics',
        operationId: 'getMetrics',
        tag: 'operations',
        access: 'public',
        description:
          'Requests and durations by route and status, flag count, imports by outcome, store commit duration and batch size, failed logins. Off with metrics.enabled: false.',
        success: { status: 200, schema: t.String(), description: 'Prometheus text exposition format', contentType: 'text/plain' },
        errors: [400],
      },
    }),
  ]
}
