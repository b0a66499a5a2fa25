/**
 * `GET /api/flags/{flagName}/impact?metric=&environment=&since=&step=` (docs/api.md#impact): what each
 * variant of a flag did to a metric its guard reads. The path is shared with the flag read as
 * `/usage` is: a URL ending in `/impact` is an impact read unless a flag has that very name.
 */

import { t } from 'elysia'
import type { FlagService } from '../../services/flag-service.ts'
import type { GuardImpact } from '../../services/guard-impact.ts'
import type { RouteSpec } from '../route-spec.ts'
import { ENVIRONMENT_PARAM } from '../schemas/common-schemas.ts'
import { flagSubresourceRoute } from './flag-subresource-route.ts'

/** Dependencies of the impact route. */
export interface ImpactRouteDeps {
  impact: GuardImpact
  flags: FlagService
}

const SUFFIX = '/impact'

const ImpactQuery = t.Object(
  {
    // required, checked by the service: a query schema's refusal would come before the credential's
    metric: t.Optional(t.String({ description: 'A metric a guard of the flag names (required)', example: 'http.server.errors' })),
    since: t.Optional(
      t.String({ description: 'ISO 8601 date-time, at most 7 days back; default 24 h ago', example: '2026-11-01T00:00:00Z' }),
    ),
    step: t.Optional(t.Integer({ description: 'Seconds per point, 10-3600; default 60', example: 60 })),
    environment: ENVIRONMENT_PARAM,
  },
  { additionalProperties: false },
)

const POINT = {
  type: 'object',
  description: "A step (its start, UTC): a counter's increase, or a histogram's count and sum",
  properties: {
    at: { type: 'string', format: 'date-time' },
    increase: { type: 'number' },
    count: { type: 'number' },
    sum: { type: 'number' },
  },
  required: ['at'],
}
const IMPACT = {
  type: 'object',
  properties: {
    metric: { type: 'string' },
    kind: { type: 'string', enum: ['sum', 'histogram'] },
    step: { type: 'integer' },
    series: {
      type: 'array',
      items: {
        type: 'object',
        properties: { variant: { type: 'string' }, points: { type: 'array', items: POINT } },
        required: ['variant', 'points'],
      },
    },
  },
  required: ['metric', 'kind', 'step', 'series'],
}

/** The impact route. */
export function impactRoutes(deps: ImpactRouteDeps): RouteSpec[] {
  return [
    flagSubresourceRoute({
      flags: deps.flags,
      suffix: SUFFIX,
      query: ImpactQuery,
      read(c, name) {
        const { metric, since, step, environment } = c.query
        return deps.impact.impact(c.auth, name, {
          metric: metric ?? '',
          ...(since !== undefined ? { since } : {}),
          ...(step !== undefined ? { step: Number(step) } : {}),
          ...(environment !== undefined ? { environment } : {}),
        })
      },
      docs: {
        summary: "A flag's impact on a metric its guard reads",
        operationId: 'getFlagImpact',
        tag: 'flags',
        access: 'flag:read',
        description:
          "Per variant, step by step, what the application reported over OTLP for a metric a guard of the flag names: a counter's increase, or a histogram's count and sum (its mean is sum / count). Kept 7 days; steps without reports are left out. 404 when no guard of the flag names the metric.",
        success: { status: 200, schema: IMPACT, description: 'The series' },
        errors: [400, 404],
      },
    }),
  ]
}
