/** GET /api/audit and POST /api/rollbacks (docs/api.md#audit-log). */

import { t } from 'elysia'
import type { AuditService } from '../../services/audit-service.ts'
import type { FlagService } from '../../services/flag-service.ts'
import { jsonAnswer } from '../answers.ts'
import { parseIfMatch } from '../if-match.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { AuditEntrySchema } from '../schemas/audit-schemas.ts'
import { EnvironmentQuery } from '../schemas/common-schemas.ts'
import { ref } from '../schemas/flag-schemas.ts'

/** Dependencies of the audit routes. */
export interface AuditRouteDeps {
  audit: AuditService
  flags: FlagService
  bodyLimit: number
}

const AuditQuery = t.Object(
  {
    flag: t.Optional(
      t.String({ description: 'The entries of the flag now so named, back through its renames; when none is, the entries that named it' }),
    ),
    actor: t.Optional(t.String({ description: 'An actor id (user, token or system part)' })),
    action: t.Optional(t.String({ description: 'An action prefix, e.g. flag. or flag.updated' })),
    since: t.Optional(t.String({ description: 'ISO 8601: entries at or after' })),
    until: t.Optional(t.String({ description: 'ISO 8601: entries at or before' })),
    // integers in the document, as generated clients send them; the wire carries digits
    limit: t.Optional(t.Integer({ description: '1-1000, default 100' })),
    before: t.Optional(t.Integer({ description: 'An entry id: entries older than it (the next page)' })),
    environment: t.Optional(t.String({ description: "Only the entries that moved this environment's state (absent: every environment)" })),
  },
  { additionalProperties: false },
)

const RollbackBody = t.Object(
  {
    name: t.String({ description: 'The flag, by its current name', example: 'checkout/new_flow' }),
    revision: t.Integer({ minimum: 1, description: 'The revision to restore', example: 3 }),
  },
  { additionalProperties: false },
)

/** The audit routes. */
export function auditRoutes(deps: AuditRouteDeps): RouteSpec[] {
  return [
    route({
      method: 'GET',
      path: '/api/audit',
      compress: true,
      query: AuditQuery,
      async handle(c) {
        const page = await deps.audit.list(c.auth, c.query)
        const extra: Record<string, string> = {}
        if (page.nextBefore !== undefined) {
          const next = new URLSearchParams(Object.entries(c.query).filter(([k, v]) => k !== 'before' && v !== undefined))
          next.set('before', String(page.nextBefore))
          extra.link = `</api/audit?${next}>; rel="next"`
        }
        return jsonAnswer(c.id, JSON.stringify(page.entries), 200, extra)
      },
      docs: {
        summary: 'Read the audit log',
        operationId: 'listAuditEntries',
        tag: 'audit',
        access: 'audit:read',
        description:
          'Newest first. With `flag=`, `flag:read` is enough. When more entries remain, `Link: <…&before=<id>>; rel="next"` points at the next page. Entries cannot be changed or deleted.',
        success: {
          status: 200,
          schema: { type: 'array', items: AuditEntrySchema },
          description: 'The entries',
          headers: { Link: 'The next page, when there is one' },
        },
        errors: [400, 403],
      },
    }),
    route({
      method: 'POST',
      path: '/api/rollbacks',
      permission: 'flag:write',
      query: EnvironmentQuery,
      body: { limit: deps.bodyLimit, schema: RollbackBody },
      async handle(c) {
        const b = c.body as { name: string; revision: number }
        const env = c.query.environment
        const flag = await deps.audit.rollback(c.caller, b.name, b.revision, parseIfMatch(c.request.headers.get('if-match')), env)
        const { json, etag } = deps.flags.read.text(flag)
        return jsonAnswer(c.id, json, 200, { etag })
      },
      docs: {
        summary: 'Roll a flag back to an earlier revision',
        operationId: 'rollbackFlag',
        tag: 'audit',
        access: 'flag:write',
        description:
          'Restores the type, description, default value, value and constraints the flag had right after `revision`, as a new revision recorded with source `rollback`. The name stays the current one. Validated like any update.',
        body: RollbackBody,
        headers: [{ name: 'If-Match', description: 'Apply only if the flag is at this revision; otherwise 412' }],
        success: { status: 200, schema: ref('Flag'), description: 'The flag after the rollback', headers: { ETag: 'The new revision' } },
        errors: [400, 404, 412, 413, 415, 503],
      },
    }),
  ]
}
