/** /api/environments and /api/environments/{name} (docs/environments.md): the environments one daemon holds. */

import { t } from 'elysia'
import { MAX_ENVIRONMENTS } from '../../domain/environment.ts'
import { COLOR_MAX } from '../../domain/environment-color.ts'
import { InvalidError, NotFoundError } from '../../domain/errors.ts'
import type { EnvironmentService } from '../../services/environment-service.ts'
import { jsonAnswer } from '../answers.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { ApplyErrorSchema, EnvironmentQuery, NoQuery } from '../schemas/common-schemas.ts'
import { FLAG_NAME, flagNameFromPath } from './flag-routes.ts'

/** Dependencies of the environment routes. */
export interface EnvironmentRouteDeps {
  environments: EnvironmentService
  bodyLimit: number
  /** Whether a flag of this name exists: then `…/environments` is its read. */
  flagExists: (rawName: string) => boolean
}

const NameParams = t.Object({
  name: t.String({ description: 'The environment name: 1-64 of A-Z a-z 0-9 . _ -', example: 'staging' }),
})

const Environment = t.Object({
  name: t.String(),
  description: t.String(),
  protected: t.Boolean({ description: 'Changes to it go through change requests' }),
  requiredApprovals: t.Integer({ minimum: 0, maximum: 10 }),
  color: t.String({ description: 'Its CSS colour: its own, else the default for its name', example: '#b45309' }),
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
    color: t.Optional(
      t.Union([t.String({ maxLength: COLOR_MAX }), t.Null()], {
        description: 'A CSS colour: #rgb, #rrggbb, rgb(…), hsl(…) or a named colour; null goes back to the default for the name',
        example: 'teal',
      }),
    ),
  },
  { additionalProperties: false },
)

const CompareQuery = t.Object(
  {
    // required, but checked by the handler: a missing one is a 400 after the caller's 401/403
    from: t.Optional(t.String({ description: 'One environment (required)', example: 'staging' })),
    to: t.Optional(t.String({ description: 'The other (required)', example: 'production' })),
    prefix: t.Optional(t.String({ description: 'Only flags whose name starts with this' })),
  },
  { additionalProperties: false },
)

const Difference = t.Object({
  name: t.String(),
  fields: t.Record(t.String(), t.Object({ from: t.Unknown(), to: t.Unknown() }), {
    description: 'Each per-environment field that differs: its value in from and in to (null: absent)',
  }),
  revisions: t.Object(
    { from: t.Integer(), to: t.Integer() },
    {
      description:
        "The flag's revision at which each environment last saw it change; to above from: the target changed after the source, and promoting would undo that",
    },
  ),
})

const PromoteBody = t.Object(
  {
    from: t.String({ description: 'The environment whose states are copied', example: 'staging' }),
    flags: t.Optional(t.Array(t.String(), { description: 'The flags to promote (default: every flag, or those under prefix)' })),
    prefix: t.Optional(t.String()),
    dryRun: t.Optional(t.Boolean({ description: 'Show what would change; change nothing' })),
  },
  { additionalProperties: false },
)

const Promotion = t.Object({
  dryRun: t.Boolean(),
  changes: t.Array(
    t.Object({
      name: t.String(),
      revision: t.Integer({ description: 'The flag revision after the promotion' }),
      diff: t.Record(t.String(), t.Object({ before: t.Unknown(), after: t.Unknown() })),
    }),
  ),
  unchanged: t.Integer({ description: 'Chosen flags already equal in both environments' }),
  applyError: ApplyErrorSchema,
})

const PROMOTE = '/promote'
const STATES = '/environments'

const FlagStates = t.Record(
  t.String(),
  t.Object({
    valueExists: t.Boolean(),
    value: t.Optional(t.Unknown()),
    enabled: t.Optional(t.Boolean()),
    targeting: t.Optional(t.Object({}, { additionalProperties: true })),
    chancePercentB: t.Optional(t.Number()),
  }),
  { description: "Each environment's state of the flag, by environment name" },
)

/** The environment routes. */
export function environmentRoutes(deps: EnvironmentRouteDeps): RouteSpec[] {
  const { environments } = deps
  // a path that is not valid percent-encoding names no flag here: the flag read answers it (400)
  const flagNamed = (path: string) => {
    try {
      return deps.flagExists(flagNameFromPath(path.slice('/api/flags/'.length)))
    } catch {
      return true
    }
  }
  return [
    route({
      method: 'GET',
      path: '/api/flags/*',
      // a flag named …/environments is read instead (a flag and its …/environments cannot both exist)
      when: (path) => path.endsWith(STATES) && !flagNamed(path),
      permission: 'flag:read',
      // ?environment= as on every flag route: it must name one; the answer is every readable one
      query: EnvironmentQuery,
      label: '/api/flags/{flagName}/environments',
      handle: (c) => environments.statesOf(c.caller, flagNameFromPath((c.params['*'] ?? '').slice(0, -STATES.length)), c.query.environment),
      docs: {
        summary: "A flag's state in every environment",
        operationId: 'getFlagEnvironments',
        tag: 'environments',
        access: 'flag:read',
        wildcard: { ...FLAG_NAME, suffix: STATES },
        success: { status: 200, schema: FlagStates, description: 'The states' },
        errors: [400, 404],
      },
    }),
    route({
      method: 'GET',
      path: '/api/environments/compare',
      permission: 'flag:read',
      query: CompareQuery,
      handle(c) {
        const { from, to, prefix } = c.query
        for (const [field, value] of [
          ['from', from],
          ['to', to],
        ] as const)
          if (value === undefined) throw new InvalidError(`${field} is required: the environments to compare`, field, 'required')
        return environments.compare(c.caller, from as string, to as string, prefix)
      },
      docs: {
        summary: 'Compare two environments',
        operationId: 'compareEnvironments',
        tag: 'environments',
        access: 'flag:read',
        description: 'The flags whose per-environment state (value, enabled, targeting, chancePercentB) differs, in name order.',
        success: { status: 200, schema: t.Array(Difference), description: 'The differences' },
        errors: [400, 404],
      },
    }),
    route({
      method: 'POST',
      path: '/api/environments/*',
      permission: 'flag:write',
      query: NoQuery,
      body: { limit: deps.bodyLimit, schema: PromoteBody },
      label: '/api/environments/{name}/promote',
      async handle(c) {
        const rest = c.params['*'] ?? ''
        if (!rest.endsWith(PROMOTE) || rest.slice(0, -PROMOTE.length).includes('/'))
          throw new NotFoundError(`no route POST /api/environments/${rest}`)
        return environments.promote(c.caller, rest.slice(0, -PROMOTE.length), c.body)
      },
      docs: {
        summary: 'Promote flag states from one environment to another',
        operationId: 'promoteEnvironment',
        tag: 'environments',
        access: 'flag:write',
        description:
          'Copies the per-environment state of the chosen flags from `from` into this environment in one durable commit, each flag with a new revision; with dryRun the same answer, nothing changed.',
        wildcard: { name: 'name', description: 'The environment promoted into', suffix: PROMOTE },
        body: PromoteBody,
        success: { status: 200, schema: Promotion, description: 'What changed (or would)' },
        errors: [400, 403, 404, 409, 413, 415, 503],
      },
    }),
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
