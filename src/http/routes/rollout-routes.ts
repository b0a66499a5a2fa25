/**
 * `GET /api/flags/{flagName}/rollout` (docs/guarded-rollouts.md#reading-a-guard): where a flag's
 * rollout stands in an environment and what its guard sees. The path is shared with the flag read:
 * a flag named `…/rollout` is read as that flag (`x` and `x/rollout` cannot both be flags).
 */

import type { FlagService } from '../../services/flag-service.ts'
import type { GuardWatcher } from '../../services/guard-watcher.ts'
import type { RouteSpec } from '../route-spec.ts'
import { EnvironmentQuery } from '../schemas/common-schemas.ts'
import { ref } from '../schemas/flag-schemas.ts'
import { flagSubresourceRoute } from './flag-subresource-route.ts'

/** The rollout route. */
export function rolloutRoutes(deps: { guards: GuardWatcher; flags: FlagService }): RouteSpec[] {
  return [
    flagSubresourceRoute({
      flags: deps.flags,
      suffix: '/rollout',
      query: EnvironmentQuery,
      read: (c, name) => deps.guards.report(c.auth, name, c.query.environment),
      docs: {
        summary: "Where a flag's rollout stands, and what its guard sees",
        operationId: 'getFlagRollout',
        tag: 'flags',
        access: 'flag:read',
        description:
          "The rollout of the flag in the environment (default: the default one) with its status and share now, and, for a guarded rollout, each check's treatment and control arms, the difference of treatment minus control with its always-valid interval, and its state. 404 when the flag has no rollout there.",
        success: { status: 200, schema: ref('RolloutReport'), description: 'The rollout and its guard' },
        errors: [400, 404],
      },
    }),
  ]
}
