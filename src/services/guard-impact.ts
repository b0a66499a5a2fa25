/**
 * `GET /api/flags/{name}/impact` (docs/api.md#impact): what each variant of a flag did to a metric
 * its guard reads, step by step, over at most the 7 days the guard log keeps.
 */

import { canSeeFlag, requirePermissionSomewhere } from '../domain/access-policy.ts'
import { InvalidError, NotFoundError } from '../domain/errors.ts'
import { parseIsoInstant } from '../domain/iso-instant.ts'
import type { Principal } from '../domain/principal.ts'
import type { Store } from '../storage/store.ts'
import { requireIn } from './environment-access.ts'
import { flagView } from './environment-views.ts'
import { guardedMetricsOf } from './guard-index.ts'
import { GUARD_RETENTION_MS, type GuardMetrics, type ImpactPoint } from './guard-metrics.ts'

/** The query of an impact read. */
export interface ImpactQuery {
  environment?: string
  metric: string
  /** ISO 8601; 24 h ago when absent. */
  since?: string
  /** Seconds, 10–3,600; 60 when absent. */
  step?: number
}

/** The answer of an impact read. */
export interface Impact {
  metric: string
  kind: 'sum' | 'histogram'
  step: number
  series: { variant: string; points: ImpactPoint[] }[]
}

/** The impact use case. */
export interface GuardImpact {
  /** The series of `query.metric` for flag `name`; 404 when no guard of the flag names it. */
  impact(principal: Principal, name: string, query: ImpactQuery): Promise<Impact>
}

/** Creates the use case; `environment`: the default one, read when the query names none. */
export function createGuardImpact(store: Store, metrics: GuardMetrics, environment: string, now: () => number): GuardImpact {
  return {
    async impact(principal, name, query) {
      requirePermissionSomewhere(principal, 'flag:read')
      const env = query.environment ?? environment
      const snapshot = store.committed()
      if (!snapshot.environments.has(env)) throw new NotFoundError(`no environment named ${JSON.stringify(env)}`)
      requireIn(principal, 'flag:read', env)
      const step = query.step ?? 60
      if (!Number.isInteger(step) || step < 10 || step > 3600)
        throw new InvalidError('step is a whole number of seconds from 10 to 3600', 'step', 'must be an integer from 10 to 3600')
      const at = now()
      let sinceMs = at - 86_400_000
      if (query.since !== undefined) {
        const parsed = parseIsoInstant(query.since)
        if (parsed === undefined)
          throw new InvalidError('since must be an ISO 8601 date-time (2026-11-01T00:00:00Z)', 'since', 'must be an ISO 8601 date-time')
        if (parsed < at - GUARD_RETENTION_MS)
          throw new InvalidError(
            'since reaches at most 7 days back (the impact series is kept 7 days)',
            'since',
            'must be within the last 7 days',
          )
        sinceMs = parsed
      }
      const flag = canSeeFlag(principal, name) ? snapshot.flags.get(name) : undefined
      // the refusals name what the guard does read, so the next query can be right (docs/api.md#impact)
      const guarded = flag === undefined ? [] : [...guardedMetricsOf(flagView(flag, env)).keys()]
      const reads =
        guarded.length > 0 ? `the guard of ${name} in ${env} reads ${guarded.join(', ')}` : `${name} has no guarded rollout in ${env}`
      if (query.metric === '')
        throw new InvalidError(`metric is required (?metric=)${flag === undefined ? '' : `: ${reads}`}`, 'metric', 'is required')
      if (flag === undefined) throw new NotFoundError(`no flag named ${JSON.stringify(name)}`)
      const found = await metrics.series(env, name, query.metric, sinceMs, step)
      if (found === undefined)
        throw new NotFoundError(
          `no guard of ${name} in ${env} reads a metric named ${JSON.stringify(query.metric)}; ${guarded.length > 0 ? `it reads ${guarded.join(', ')}` : reads}`,
        )
      return { metric: query.metric, kind: found.kind, step, series: found.series }
    },
  }
}
