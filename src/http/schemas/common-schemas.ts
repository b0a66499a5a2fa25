/** Request and response models shared by every resource: the error envelope, deletions, queries. */

import { t } from 'elysia'
import { ERROR_CODES } from '../../domain/errors.ts'
import { ENVIRONMENT_PERMISSIONS, PERMISSIONS } from '../../domain/permission.ts'

/** The error envelope of every non-2xx answer (docs/api.md#conventions). */
export const ErrorSchema = t.Object(
  {
    error: t.Object({
      code: t.Union(
        ERROR_CODES.map((c) => t.Literal(c)),
        { description: 'Machine-readable code', example: 'INVALID_REQUEST' },
      ),
      message: t.String({ description: 'Human-readable sentence', example: 'username is required' }),
      details: t.Optional(
        t.Object(
          {
            field: t.Optional(t.String({ description: 'Offending field, dotted path for nested fields' })),
            reason: t.Optional(t.String()),
            required: t.Optional(t.String({ description: 'Permission that was missing (403)' })),
            errors: t.Optional(
              t.Array(t.Object({ field: t.String(), reason: t.String() }), { description: 'Every problem, at most 1,000' }),
            ),
            errorCount: t.Optional(t.Integer({ description: 'How many problems there were in all' })),
          },
          { additionalProperties: true },
        ),
      ),
    }),
  },
  { $id: '#/components/schemas/Error' },
)

/**
 * `applyError` of a dry run (docs/change-control.md#dry-runs): the error applying would answer, as
 * the error envelope's `error` shows it; present only when applying would be refused.
 */
export const ApplyErrorSchema = t.Optional(
  t.Object(
    {
      code: t.Union(
        ERROR_CODES.map((c) => t.Literal(c)),
        {
          description: 'The code applying would answer: CHANGE_REQUEST_REQUIRED for a protected environment',
          example: 'CHANGE_REQUEST_REQUIRED',
        },
      ),
      message: t.String({ description: 'Human-readable sentence' }),
      details: t.Optional(
        t.Object(
          { environment: t.Optional(t.String({ description: 'The protected environment (CHANGE_REQUEST_REQUIRED)' })) },
          { additionalProperties: true },
        ),
      ),
    },
    {
      description:
        'Present on a dry run only when applying it would be refused (409 CHANGE_REQUEST_REQUIRED in a protected environment without flag:bypass there, or another error): the error it would answer',
    },
  ),
)

/** Routes that take no query parameters still refuse unknown ones. */
export const NoQuery = t.Object({}, { additionalProperties: false })

/** `?environment=`: which environment a request acts in (docs/environments.md); the default one when absent. */
export const ENVIRONMENT_PARAM = t.Optional(
  t.String({ description: 'The environment to act in; the default environment when absent', example: 'staging' }),
)

/** The query of a route that takes only `?environment=`. */
export const EnvironmentQuery = t.Object({ environment: ENVIRONMENT_PARAM }, { additionalProperties: false })

/** ISO 8601 UTC timestamp with milliseconds. */
export const Timestamp = t.String({ format: 'date-time', example: '2026-11-22T10:15:00.123Z' })

/** A permission: a name, or a flag permission for one environment (`flag:write@staging`, docs/environments.md#permissions). */
export const PermissionSchema = t.Union(
  [
    ...PERMISSIONS.map((p) => t.Literal(p)),
    t.String({
      pattern: `^(${ENVIRONMENT_PERMISSIONS.join('|')})@[A-Za-z0-9._-]{1,64}$`,
      description: 'A flag permission for one environment',
      example: 'flag:write@staging',
    }),
  ],
  { description: 'Permission name, or name@environment for flag:read, flag:write and flag:evaluate' },
)

/** `{deleted: true, id}` answer of user and session deletion and logout. */
export const DeletedById = t.Object({ deleted: t.Boolean({ example: true }), id: t.String() })
