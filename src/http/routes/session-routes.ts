/** /api/sessions and /api/sessions/{sessionId} (contract §8). */

import { Elysia, t } from 'elysia'
import type { SessionService } from '../../services/session-service.ts'
import { type GuardDeps, guard } from '../auth-guard.ts'
import { callerOf, principalOf } from '../request-context.ts'
import { routeDoc } from '../route-docs.ts'
import { DeletedById, NoQuery } from '../schemas/common-schemas.ts'
import { SessionSchema } from '../schemas/user-schemas.ts'

/** Dependencies of the session routes. */
export interface SessionRouteDeps extends GuardDeps {
  sessions: SessionService
}

/** The session routes. */
export function sessionRoutes(deps: SessionRouteDeps) {
  return new Elysia({ name: 'session-routes' })
    .get('/api/sessions', ({ request }) => deps.sessions.list(principalOf(request)), {
      ...guard(deps, { permission: 'session:read' }),
      query: NoQuery,
      detail: routeDoc({
        summary: 'List active sessions',
        operationId: 'listSessions',
        tag: 'sessions',
        access: 'session:read',
        description: 'Sorted by createdAt. Expired sessions are never listed.',
        success: { status: 200, schema: t.Array(SessionSchema), description: 'Active sessions' },
        errors: [400],
      }),
    })
    .delete(
      '/api/sessions/:sessionId',
      async ({ params, request }) => {
        await deps.sessions.remove(callerOf(request), params.sessionId)
        return { deleted: true, id: params.sessionId }
      },
      {
        ...guard(deps),
        params: t.Object({ sessionId: t.String({ description: 'Session id', example: 'ses_Yx5pQ0n1c3W7bM2rT9aKdg' }) }),
        query: NoQuery,
        detail: routeDoc({
          summary: 'End a session',
          operationId: 'deleteSession',
          tag: 'sessions',
          access: 'session:write',
          description: "Any user may end its own sessions; ending another user's session needs `session:write`.",
          success: { status: 200, schema: DeletedById, description: 'The session ended' },
          errors: [400, 404, 503],
        }),
      },
    )
}
