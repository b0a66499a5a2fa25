/** /api/sessions and /api/sessions/{sessionId} (docs/api.md#authentication). */

import { t } from 'elysia'
import type { SessionService } from '../../services/session-service.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { DeletedById, NoQuery } from '../schemas/common-schemas.ts'
import { SessionSchema } from '../schemas/user-schemas.ts'

/** The session routes. */
export function sessionRoutes(sessions: SessionService): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/api/sessions',
      permission: 'session:read',
      query: NoQuery,
      handle: (c) => sessions.list(c.auth),
      docs: {
        summary: 'List active sessions',
        operationId: 'listSessions',
        tag: 'sessions',
        access: 'session:read',
        description: 'Sorted by createdAt. Expired sessions are never listed.',
        success: { status: 200, schema: t.Array(SessionSchema), description: 'Active sessions' },
        errors: [400],
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/sessions/:sessionId',
      query: NoQuery,
      async handle(c) {
        const id = c.params.sessionId ?? ''
        await sessions.remove(c.caller, id)
        return { deleted: true, id }
      },
      docs: {
        summary: 'End a session',
        operationId: 'deleteSession',
        tag: 'sessions',
        access: 'session:write',
        params: t.Object({ sessionId: t.String({ description: 'Session id', example: 'ses_Yx5pQ0n1c3W7bM2rT9aKdg' }) }),
        description: "Any user may end its own sessions; ending another user's session needs `session:write`.",
        success: { status: 200, schema: DeletedById, description: 'The session ended' },
        errors: [400, 404, 503],
      },
    }),
  ]
}
