/**
 * `GET /api/flags/{flagName}/dependents` (docs/api.md#prerequisites): the flags that require a flag
 * directly, in name order. The path is shared with the flag read as `/impact` is: a URL ending in
 * `/dependents` is this read unless a flag has that very name.
 */

import { NotFoundError } from '../../domain/errors.ts'
import type { FlagService } from '../../services/flag-service.ts'
import { jsonAnswer } from '../answers.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { EnvironmentQuery } from '../schemas/common-schemas.ts'
import { FLAG_NAME, flagNameFromPath, readFlagAnswer } from './flag-routes.ts'

const SUFFIX = '/dependents'

/** The dependents route. */
export function dependentsRoutes(deps: { flags: FlagService }): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/api/flags/*',
      when: (path) => path.endsWith(SUFFIX),
      permission: 'flag:read',
      query: EnvironmentQuery,
      label: '/api/flags/{flagName}/dependents',
      handle(c) {
        const raw = c.params['*'] ?? ''
        const env = c.query.environment
        // a flag named …/dependents is read (a flag and its …/dependents cannot both exist)
        try {
          return readFlagAnswer(deps.flags, c.auth, raw, c.request.headers.get('if-none-match'), c.id, env)
        } catch (err) {
          if (!(err instanceof NotFoundError)) throw err
        }
        const names = deps.flags.dependents(c.auth, flagNameFromPath(raw.slice(0, -SUFFIX.length)), env)
        return jsonAnswer(c.id, JSON.stringify(names))
      },
      docs: {
        summary: 'The flags that require a flag',
        operationId: 'getFlagDependents',
        tag: 'flags',
        access: 'flag:read',
        description:
          'The names of the flags whose prerequisites name this one directly (archived ones included: they still require it), in name order; for a token confined to flagPrefixes, only those it may see. While any flag requires it, deleting or archiving it, renaming it, changing its type or removing a variant they name answers 409 naming them.',
        wildcard: { ...FLAG_NAME, suffix: SUFFIX },
        success: { status: 200, schema: { type: 'array', items: { type: 'string' } }, description: 'Flag names' },
        errors: [400, 403, 404],
      },
    }),
  ]
}
