/** /api/change-requests (docs/change-control.md#change-requests): changes of an environment's flag states, reviewed before they land. */

import { t } from 'elysia'
import { CHANGE_REQUEST_STATES, REQUESTABLE_FIELDS, SHARED_REQUESTABLE_FIELDS } from '../../domain/change-request.ts'
import { NotFoundError } from '../../domain/errors.ts'
import type { ChangeRequestService } from '../../services/change-request-service.ts'
import { jsonAnswer } from '../answers.ts'
import { readOptionalJsonBody } from '../body-reader.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { NoQuery } from '../schemas/common-schemas.ts'

/** Dependencies of the change-request routes. */
export interface ChangeRequestRouteDeps {
  changeRequests: ChangeRequestService
  bodyLimit: number
}

const Actor = t.Object({ type: t.String(), id: t.String(), name: t.String() })
const Review = t.Object({ by: Actor, at: t.String({ format: 'date-time' }), comment: t.Optional(t.String()) })

const FieldsToSet = t.Record(t.String(), t.Unknown(), {
  description: `The fields to set: ${[...REQUESTABLE_FIELDS, ...SHARED_REQUESTABLE_FIELDS].join(', ')} (as a flag PUT takes them; the shared ones change every environment)`,
  example: { value: true },
})

const RequestBody = t.Object(
  {
    environment: t.String({ description: 'The environment whose flag states change', example: 'production' }),
    title: t.String({ minLength: 1, maxLength: 200, example: 'Turn on the new checkout' }),
    description: t.Optional(t.String({ maxLength: 4096 })),
    changes: t.Array(
      t.Object(
        {
          flag: t.String({ example: 'checkout/new_flow' }),
          set: t.Optional(FieldsToSet),
          delete: t.Optional(t.Literal(true, { description: 'Deletes the flag in every environment (instead of set)' })),
          archive: t.Optional(t.Literal(true, { description: 'Archives the flag in every environment (instead of set)' })),
        },
        { additionalProperties: false },
      ),
      {
        minItems: 1,
        maxItems: 1000,
      },
    ),
    scheduledAt: t.Optional(
      t.Union([t.String({ format: 'date-time' }), t.Null()], { description: 'Apply it at this time once approved (null: when applied)' }),
    ),
  },
  { additionalProperties: false },
)

const EditBody = t.Omit(RequestBody, ['environment'], { additionalProperties: false })

const ChangeRequest = t.Object({
  id: t.String({ example: 'cr_2wRuCp8ShLx4j9madTuFcA' }),
  environment: t.String(),
  title: t.String(),
  description: t.String(),
  state: t.Union(
    CHANGE_REQUEST_STATES.map((s) => t.Literal(s)),
    { description: 'open → approved → scheduled → applied; or rejected, cancelled, failed' },
  ),
  author: Actor,
  changes: t.Array(
    t.Object({
      flag: t.String(),
      set: FieldsToSet,
      delete: t.Optional(t.Literal(true)),
      archive: t.Optional(t.Literal(true)),
      diff: t.Optional(
        t.Record(t.String(), t.Object({ before: t.Unknown(), after: t.Unknown() }), {
          description: 'A single read: each field that would change, from what the environment serves now',
        }),
      ),
    }),
  ),
  baseRevisions: t.Record(t.String(), t.Integer(), {
    description: 'Per flag, the revision of the last change that affected this environment when the request was made',
  }),
  approvals: t.Array(Review),
  rejection: t.Optional(Review),
  scheduledAt: t.Union([t.String({ format: 'date-time' }), t.Null()]),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
  appliedAt: t.Optional(t.String({ format: 'date-time' })),
  failureReason: t.Optional(t.String({ description: 'Why applying it failed (state failed)' })),
})

const IdParams = t.Object({ id: t.String({ description: 'The change request id', example: 'cr_2wRuCp8ShLx4j9madTuFcA' }) })
const Comment = t.Object({ comment: t.Optional(t.String({ maxLength: 4096 })) }, { additionalProperties: false })
const RequiredComment = t.Object({ comment: t.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false })

const ListQuery = t.Object(
  {
    state: t.Optional(t.String({ description: `One of ${CHANGE_REQUEST_STATES.join(', ')} (absent: every state)` })),
    environment: t.Optional(t.String({ description: 'Only this environment (absent: every environment)' })),
    flag: t.Optional(t.String({ description: 'Only requests changing this flag' })),
  },
  { additionalProperties: false },
)

/** The actions on one request: `POST /api/change-requests/{id}/<action>`. */
const ACTIONS = [
  {
    action: 'approve',
    summary: 'Approve a change request',
    access: 'flag:approve' as const,
    body: Comment,
    description:
      'Needs flag:approve in its environment; never by its author, never twice by one person (409). With enough approvals (the environment’s requiredApprovals) it is approved, or scheduled when it has a time; one whose time has passed is applied at once.',
  },
  {
    action: 'reject',
    summary: 'Reject a change request',
    access: 'flag:approve' as const,
    body: RequiredComment,
    description: 'Needs flag:approve in its environment and a comment saying why; not by its author (who cancels it).',
  },
  {
    action: 'apply',
    summary: 'Apply a change request now',
    access: 'any-user' as const,
    body: undefined,
    description:
      'By its author or an approver; 409 unless approved or scheduled. Every change in one commit, each flag at the revision the request was made on: otherwise nothing is applied, the request is failed with the reason, and the answer is 409.',
  },
  {
    action: 'cancel',
    summary: 'Cancel a change request',
    access: 'any-user' as const,
    body: undefined,
    description: 'By its author, while it is open, approved or scheduled.',
  },
]

/** The change-request routes. */
export function changeRequestRoutes(deps: ChangeRequestRouteDeps): RouteSpec[] {
  const { changeRequests } = deps
  const idOf = (rest: string, action: string) => {
    const id = rest.endsWith(`/${action}`) ? rest.slice(0, -(action.length + 1)) : ''
    if (id === '' || id.includes('/')) throw new NotFoundError(`no route POST /api/change-requests/${rest}`)
    return decodeURIComponent(id)
  }
  return [
    route({
      method: 'POST',
      path: '/api/change-requests',
      permission: 'flag:write',
      query: NoQuery,
      body: { limit: deps.bodyLimit, schema: RequestBody },
      async handle(c) {
        const made = await changeRequests.create(c.caller, c.body)
        return jsonAnswer(c.id, JSON.stringify(made), 201, { location: `/api/change-requests/${made.id}` })
      },
      docs: {
        summary: 'Request a change',
        operationId: 'createChangeRequest',
        tag: 'change-requests',
        access: 'flag:write',
        description:
          'Proposes new per-environment fields for one or more flags of one environment (flag:write there), checked now and again when applied (400 naming changes[i].set.<field>). In an environment needing no approval it is approved at once.',
        body: RequestBody,
        success: { status: 201, schema: ChangeRequest, description: 'The request', headers: { Location: 'Where it is' } },
        errors: [400, 403, 413, 415, 503],
      },
    }),
    route({
      method: 'GET',
      path: '/api/change-requests',
      compress: true,
      permission: 'flag:read',
      query: ListQuery,
      handle: (c) => changeRequests.list(c.auth, c.query),
      docs: {
        summary: 'List change requests',
        operationId: 'listChangeRequests',
        tag: 'change-requests',
        access: 'flag:read',
        description: 'Newest first; those of the environments the caller may read.',
        success: { status: 200, schema: t.Array(ChangeRequest), description: 'The requests' },
        errors: [400, 404],
      },
    }),
    route({
      method: 'GET',
      path: '/api/change-requests/:id',
      permission: 'flag:read',
      query: NoQuery,
      handle: (c) => changeRequests.get(c.auth, decodeURIComponent(c.params.id ?? '')),
      docs: {
        summary: 'Read a change request',
        operationId: 'getChangeRequest',
        tag: 'change-requests',
        access: 'flag:read',
        description: 'With each change’s diff against what the environment serves now.',
        params: IdParams,
        success: { status: 200, schema: ChangeRequest, description: 'The request' },
        errors: [400, 404],
      },
    }),
    route({
      method: 'PUT',
      path: '/api/change-requests/:id',
      permission: 'flag:write',
      query: NoQuery,
      body: { limit: deps.bodyLimit, schema: EditBody },
      handle: (c) => changeRequests.edit(c.caller, decodeURIComponent(c.params.id ?? ''), c.body),
      docs: {
        summary: 'Edit a change request',
        operationId: 'editChangeRequest',
        tag: 'change-requests',
        access: 'flag:write',
        description: 'By its author, while open, approved or scheduled: replaces its title, changes and time, and clears its approvals.',
        params: IdParams,
        body: EditBody,
        success: { status: 200, schema: ChangeRequest, description: 'The request' },
        errors: [400, 403, 404, 409, 413, 415, 503],
      },
    }),
    ...ACTIONS.map((a) =>
      route({
        method: 'POST',
        path: '/api/change-requests/*',
        // the last action serves the rest of the paths (the router wants one without `when`): others are its 404
        ...(a.action === 'cancel' ? {} : { when: (path: string) => path.endsWith(`/${a.action}`) }),
        label: `/api/change-requests/{id}/${a.action}`,
        ...(a.access === 'flag:approve' ? { permission: 'flag:approve' as const } : {}),
        query: NoQuery,
        // a rejection says why; the other actions may come without a body
        body:
          a.action === 'reject'
            ? { limit: deps.bodyLimit, schema: RequiredComment }
            : { limit: deps.bodyLimit, read: readOptionalJsonBody },
        handle(c) {
          const id = idOf(c.params['*'] ?? '', a.action)
          if (a.action === 'approve') return changeRequests.approve(c.caller, id, c.body)
          if (a.action === 'reject') return changeRequests.reject(c.caller, id, c.body)
          if (a.action === 'apply') return changeRequests.apply(c.caller, id)
          return changeRequests.cancel(c.caller, id)
        },
        docs: {
          summary: a.summary,
          operationId: `${a.action}ChangeRequest`,
          tag: 'change-requests',
          access: a.access,
          description: a.description,
          wildcard: { name: 'id', description: 'The change request id', suffix: `/${a.action}` },
          ...(a.body ? { body: a.body } : {}),
          success: { status: 200, schema: ChangeRequest, description: 'The request after it' },
          errors: [400, 403, 404, 409, 413, 415, 503],
        },
      }),
    ),
  ]
}
