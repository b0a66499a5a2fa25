/**
 * `GET /api/flags/{flagName}/dependents` (docs/api.md#prerequisites): the flags that require a flag
 * directly, in name order. The path is shared with the flag read as `/impact` is: a URL ending in
 * `/dependents` is this read unless a flag has that very name.
 */

import type { FlagService } from '../../services/flag-service.ts'
import { jsonAnswer } from '../answers.ts'
import type { RouteSpec } from '../route-spec.ts'
import { EnvironmentQuery } from '../schemas/common-schemas.ts'
import { flagSubresourceRoute } from './flag-subresource-route.ts'

/** The dependents route. */
export function dependentsRoutes(deps: { flags: FlagService }): RouteSpec[] {
  return [
    flagSubresourceRoute({
      flags: deps.flags,
      suffix: '/dependents',
      query: EnvironmentQuery,
      read: (c, name) => jsonAnswer(c.id, JSON.stringify(deps.flags.dependents(c.auth, name, c.query.environment))),
      docs: {
        summary: 'The flags that require a flag',
        operationId: 'getFlagDependents',
        tag: 'flags',
        access: 'flag:read',
        description:
          'The names of the flags whose prerequisites name this one directly (archived ones included: they still require it), in name order; for a token confined to flagPrefixes, only those it may see. While any flag requires it, deleting or archiving it, renaming it, changing its type or removing a variant they name answers 409 naming them.',
        success: { status: 200, schema: { type: 'array', items: { type: 'string' } }, description: 'Flag names' },
        errors: [400, 403, 404],
      },
    }),
  ]
}
