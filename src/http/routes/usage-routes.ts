/**
 * Flag usage (docs/api.md#usage): `GET /api/flags/{flagName}/usage?since=` and `GET /api/usage`. The first
 * shares its path with the flag read: a URL ending in `/usage` is a usage request unless a flag has
 * that very name (then it is that flag's read; `x` and `x/usage` cannot both be flags).
 */

import { t } from 'elysia'
import { NotFoundError } from '../../domain/errors.ts'
import type { FlagService } from '../../services/flag-service.ts'
import type { UsageService } from '../../services/usage-service.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { ENVIRONMENT_PARAM } from '../schemas/common-schemas.ts'
import { ref } from '../schemas/flag-schemas.ts'
import { FLAG_NAME, flagNameFromPath, readFlagAnswer } from './flag-routes.ts'

/** Dependencies of the usage routes. */
export interface UsageRouteDeps {
  usage: UsageService
  flags: FlagService
}

const SUFFIX = '/usage'

/** True for a path ending in `/usage` (cheap: it runs on every flag read). */
const usagePath = (path: string): boolean => path.endsWith(SUFFIX)

const UsageQuery = t.Object(
  {
    since: t.Optional(t.String({ description: 'ISO 8601 date or date-time; default 30 days ago', example: '2026-11-01T00:00:00Z' })),
    environment: ENVIRONMENT_PARAM,
  },
  { additionalProperties: false },
)

/** The usage routes. */
export function usageRoutes(deps: UsageRouteDeps): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/api/flags/*',
      when: usagePath,
      permission: 'flag:read',
      query: UsageQuery,
      label: '/api/flags/{flagName}/usage',
      handle(c) {
        const raw = c.params['*'] ?? ''
        const { since, environment } = c.query
        // a flag named …/usage is read, not counted (a flag and its …/usage cannot both exist); in the
        // asked environment, so a reader of that one environment reaches the usage
        try {
          return readFlagAnswer(deps.flags, c.auth, raw, c.request.headers.get('if-none-match'), c.id, environment)
        } catch (err) {
          if (!(err instanceof NotFoundError)) throw err
        }
        return deps.usage.flagUsage(c.auth, flagNameFromPath(raw.slice(0, -SUFFIX.length)), since, environment)
      },
      docs: {
        summary: "A flag's usage",
        operationId: 'getFlagUsage',
        tag: 'flags',
        access: 'flag:read',
        description:
          'How often the flag was evaluated through OFREP (single and bulk; a bulk 304 counts without a variant), per variant and per hour (UTC), since `since`. In-process evaluations (flagd sync) are not seen. Counts reach this answer at once and the database within a minute.',
        wildcard: { ...FLAG_NAME, suffix: SUFFIX },
        success: { status: 200, schema: ref('FlagUsage'), description: 'The usage' },
        errors: [400, 404],
      },
    }),
    route({
      method: 'GET',
      path: '/api/usage',
      compress: true,
      permission: 'flag:read',
      query: UsageQuery,
      handle: (c) => deps.usage.list(c.auth, c.query.environment, c.query.since),
      docs: {
        summary: 'Usage of every flag',
        operationId: 'listUsage',
        tag: 'flags',
        access: 'flag:read',
        description:
          'Every flag the caller may see, in name order, with its evaluations since `since` (default: the last 30 days) in the environment asked about (default: the default one) and whether it is stale (neither evaluated in any environment nor changed for usage.staleDays, whatever `since` says).',
        success: { status: 200, schema: { type: 'array', items: ref('UsageSummary') }, description: 'The usage of every flag' },
        errors: [400],
      },
    }),
  ]
}
