/**
 * A read below a flag's path, `GET /api/flags/{flagName}<suffix>` (`/dependents`, `/rollout`,
 * `/impact`; docs/api.md#flag-names). The wildcard is the flag read's own, so a flag whose name
 * itself ends with the suffix is read as that flag (a flag and its `…<suffix>` cannot both exist);
 * any other path is `read` for the flag the rest of it names.
 */

import type { TObject } from '@sinclair/typebox'
import { NotFoundError } from '../../domain/errors.ts'
import type { FlagService } from '../../services/flag-service.ts'
import type { RequestContext } from '../request-context.ts'
import type { RouteDoc } from '../route-docs.ts'
import { type QueryOf, type RouteSpec, route } from '../route-spec.ts'
import { FLAG_NAME, flagNameFromPath, readFlagAnswer } from './flag-routes.ts'

/** What a flag's sub-resource route needs: its suffix, its query (with `environment`), its read and docs. */
export interface FlagSubresource<Q extends TObject> {
  flags: FlagService
  suffix: string
  query: Q
  read(c: RequestContext<QueryOf<Q>>, flagName: string): unknown
  docs: Omit<RouteDoc, 'wildcard'>
}

/** The route of one sub-resource of a flag, with `flag:read`. */
export function flagSubresourceRoute<Q extends TObject>(spec: FlagSubresource<Q>): RouteSpec {
  const { flags, suffix } = spec
  return route<Q>({
    method: 'GET',
    path: '/api/flags/*',
    when: (path) => path.endsWith(suffix),
    permission: 'flag:read',
    query: spec.query,
    label: `/api/flags/{flagName}${suffix}`,
    handle(c) {
      const raw = c.params['*'] ?? ''
      // every sub-resource's query carries the environment the flag is read in
      const { environment } = c.query as { environment?: string }
      try {
        return readFlagAnswer(flags, c.auth, raw, c.request.headers.get('if-none-match'), c.id, environment)
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err
      }
      return spec.read(c, flagNameFromPath(raw.slice(0, -suffix.length)))
    },
    docs: { ...spec.docs, wildcard: { ...FLAG_NAME, suffix } },
  })
}
