/** /api/environments and /api/environments/{name} (docs/environments.md): the environments one daemon holds. */

import { t } from 'elysia'
import { MAX_ENVIRONMENTS } from '../../domain/environment.ts'
import type { EnvironmentService } from '../../services/environment-service.ts'
import { jsonAnswer } from '../answers.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { NoQuery } from '../schemas/common-schemas.ts'

/** Dependencies of the environment routes. */
export interface EnvironmentRouteDeps {
  environments: EnvironmentService
  bodyLimit: number
}

const NameParams = t.Object({
  name: t.String({ description: 'The environment name: 1-64 of A-Z a-z 0-9 . _ -', example: 'staging' }),
})

const Environment = t.Object({
  name: t.String(),
  description: t.String(),
  protected: t.Boolean({ description: 'Changes to it go through change requests' }),
  requiredApprovals: t.Integer({ minimum: 0, maximum: 10 }),
  default: t.Boolean({ description: 'The one config environment names: evaluated when no environment is given' }),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})

/** The body of a PUT: what the service validates is what the document says (one schema). */
const EnvironmentInput = t.Object(
  {
    description: t.Optional(t.String({ maxLength: 4096 })),
    protected: t.Optional(t.Boolean()),
    requiredApprovals: t.Optional(t.Integer({ minimum: 0, maximum: 10 })),
    copyFrom: t.Optional(t.String({ description: 'On create: whose flag states to start from (default: the default environment)' })),
  },
  { additionalProperties: false },
)

/** The environment routes. */
export function environmentRoutes(deps: EnvironmentRouteDeps): RouteSpec[] {
  const { environments } = deps
  return [
    route({
      method: 'GET',
      path: '/api/environments',
      permission: 'flag:read',
      query: NoQuery,
      handle: (c) => environments.list(c.caller),
      docs: {
        summary: 'List environments',
        operationId: 'listEnvironments',
        tag: 'environments',
        access: 'flag:read',
        description: 'In the order they were created.',
        success: { status: 200, schema: t.Array(Environment), description: 'The environments' },
        errors: [400],
      },
    }),
    route({
      method: 'PUT',
      path: '/api/environments/:name',
      permission: 'environment:write',
      query: NoQuery,
      body: { limit: deps.bodyLimit, schema: EnvironmentInput },
      async handle(c) {
        const name = c.params.name ?? ''
        const { environment, created } = await environments.put(c.caller, name, c.body)
        const body = JSON.stringify(environment)
        return jsonAnswer(c.id, body, created ? 201 : 200, created ? { location: `/api/environments/${encodeURIComponent(name)}` } : {})
      },
      docs: {
        summary: 'Create or change an environment',
        operationId: 'putEnvironment',
        tag: 'environments',
        access: 'environment:write',
        description: `A new environment starts with every flag's state copied from copyFrom (default: the default environment), in one commit; no flag's revision moves. At most ${MAX_ENVIRONMENTS}.`,
        params: NameParams,
        body: EnvironmentInput,
        success: { status: 200, schema: Environment, description: 'The environment, changed (201 when created, with Location)' },
        other: { 201: { schema: Environment, description: 'The environment, created' } },
        errors: [400, 403, 413, 415, 503],
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/environments/:name',
      permission: 'environment:write',
      query: NoQuery,
      async handle(c) {
        const name = c.params.name ?? ''
        await environments.remove(c.caller, name)
        return { deleted: true, name }
      },
      docs: {
        summary: 'Remove an environment',
        operationId: 'deleteEnvironment',
        tag: 'environments',
        access: 'environment:write',
        description: 'Drops its flag states. The default environment cannot be removed (409).',
        params: NameParams,
        success: {
          status: 200,
          schema: t.Object({ deleted: t.Literal(true), name: t.String() }),
          description: 'Removed',
        },
        errors: [400, 403, 404, 409, 503],
      },
    }),
  ]
}
