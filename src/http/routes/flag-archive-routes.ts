/**
 * `POST /api/flags/{flagName}/archive` and `…/restore` (docs/api.md#archive). They share the path of
 * `POST …/evaluate`: the suffix says which, the rest of the path is the flag's name.
 */

import type { FlagService } from '../../services/flag-service.ts'
import { jsonAnswer } from '../answers.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { EnvironmentQuery } from '../schemas/common-schemas.ts'
import { ref } from '../schemas/flag-schemas.ts'
import { FLAG_NAME, flagNameFromPath } from './flag-routes.ts'

const ACTIONS = [
  {
    suffix: '/archive',
    summary: 'Archive a flag',
    operationId: 'archiveFlag',
    description:
      'Hides the flag without losing it: it leaves lists (GET /api/flags?archived=true shows it), every evaluation path answers it FLAG_NOT_FOUND, sync and the flagd export leave it out; its name stays taken, its usage and history stay. A new revision; 409 when it is archived already.',
  },
  {
    suffix: '/restore',
    summary: 'Restore an archived flag',
    operationId: 'restoreFlag',
    description: 'Brings an archived flag back exactly as it was, at a new revision; 409 when it is not archived.',
  },
] as const

/** The archive and restore routes. */
export function flagArchiveRoutes(deps: { flags: FlagService }): RouteSpec[] {
  return ACTIONS.map((a) =>
    route({
      method: 'POST',
      path: '/api/flags/*',
      when: (path) => path.endsWith(a.suffix),
      label: `/api/flags/{flagName}${a.suffix}`,
      permission: 'flag:write',
      query: EnvironmentQuery,
      async handle(c) {
        const raw = c.params['*'] ?? ''
        const name = flagNameFromPath(raw.slice(0, -a.suffix.length))
        const env = c.query.environment
        const flag = a.suffix === '/archive' ? await deps.flags.archive(c.caller, name, env) : await deps.flags.restore(c.caller, name, env)
        const { json, etag } = deps.flags.read.text(flag)
        return jsonAnswer(c.id, json, 200, { etag })
      },
      docs: {
        summary: a.summary,
        operationId: a.operationId,
        tag: 'flags',
        access: 'flag:write',
        description: `${a.description} Needs the unscoped flag:write.`,
        wildcard: { ...FLAG_NAME, suffix: a.suffix },
        success: { status: 200, schema: ref('Flag'), description: 'The flag after it', headers: { ETag: 'The new revision' } },
        errors: [400, 403, 404, 409, 503],
      },
    }),
  )
}
