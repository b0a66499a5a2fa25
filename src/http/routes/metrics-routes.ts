/** GET /metrics: Prometheus text, no token (like /health); absent when metrics are off. */

import { Elysia, t } from 'elysia'
import { routeDoc } from '../route-docs.ts'
import { NoQuery } from '../schemas/common-schemas.ts'

/** The metrics route over a renderer, or no route at all. */
export function metricsRoutes(metrics: { contentType: string; render(): Promise<string> } | undefined) {
  const app = new Elysia({ name: 'metrics-routes' })
  if (!metrics) return app
  return app.get('/metrics', async () => new Response(await metrics.render(), { headers: { 'content-type': metrics.contentType } }), {
    query: NoQuery,
    detail: {
      ...routeDoc({
        summary: 'Prometheus metrics',
        operationId: 'getMetrics',
        tag: 'operations',
        access: 'public',
        description:
          'Requests and durations by route and status, flag count, imports by outcome, store commit duration and batch size, failed logins. Off with metrics.enabled: false.',
        success: { status: 200, schema: t.String(), description: 'Prometheus text format' },
        errors: [400],
      }),
      responses: {
        200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: { type: 'string' } } } },
        400: { $ref: '#/components/responses/E400' },
      },
    },
  })
}
