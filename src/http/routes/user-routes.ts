/** /api/users and /api/users/{userId} (contract §4). */

import { Elysia, type Static, t } from 'elysia'
import { authorizeUserUpdate } from '../../domain/access-policy.ts'
import type { UserService } from '../../services/user-service.ts'
import { type GuardDeps, guard } from '../auth-guard.ts'
import { callerOf, principalOf } from '../request-context.ts'
import { routeDoc } from '../route-docs.ts'
import { DeletedById, NoQuery } from '../schemas/common-schemas.ts'
import { CreateUserBody, CreateUserBodyDoc, UpdateUserBody, UpdateUserBodyDoc, UserSchema } from '../schemas/user-schemas.ts'

/** Dependencies of the user routes. */
export interface UserRouteDeps extends GuardDeps {
  users: UserService
  bodyLimit: number
}

const UserIdParams = t.Object({ userId: t.String({ description: 'User id', example: 'usr_3q2bqMWe2G9Zr0yLw1bXcg' }) })

/** The user routes. */
export function userRoutes(deps: UserRouteDeps) {
  return new Elysia({ name: 'user-routes' })
    .get('/api/users', ({ request }) => deps.users.list(principalOf(request)), {
      ...guard(deps, { permission: 'user:read' }),
      query: NoQuery,
      detail: routeDoc({
        summary: 'List users',
        operationId: 'listUsers',
        tag: 'users',
        access: 'user:read',
        description: 'Sorted by lower-cased username.',
        success: { status: 200, schema: t.Array(UserSchema), description: 'All users' },
        errors: [400],
      }),
    })
    .post(
      '/api/users',
      async ({ body, set, request }) => {
        const user = await deps.users.create(callerOf(request), body as Static<typeof CreateUserBody>)
        set.status = 201
        set.headers.location = `/api/users/${encodeURIComponent(user.id)}`
        return user
      },
      {
        ...guard(deps, { permission: 'user:write', bodyLimit: deps.bodyLimit, schema: CreateUserBody }),
        query: NoQuery,
        detail: routeDoc({
          summary: 'Create a user',
          operationId: 'createUser',
          tag: 'users',
          access: 'user:write',
          body: CreateUserBodyDoc,
          success: { status: 201, schema: UserSchema, description: 'The new user', headers: { Location: 'URL of the new user' } },
          errors: [400, 409, 413, 415, 503],
        }),
      },
    )
    .get('/api/users/:userId', ({ params, request }) => deps.users.get(principalOf(request), params.userId), {
      ...guard(deps, { permission: 'user:read' }),
      params: UserIdParams,
      query: NoQuery,
      detail: routeDoc({
        summary: 'Get a user',
        operationId: 'getUser',
        tag: 'users',
        access: 'user:read',
        success: { status: 200, schema: UserSchema, description: 'The user' },
        errors: [400, 404],
      }),
    })
    .put(
      '/api/users/:userId',
      ({ params, body, request }) => deps.users.update(callerOf(request), params.userId, body as Static<typeof UpdateUserBody>),
      {
        ...guard(deps, {
          bodyLimit: deps.bodyLimit,
          schema: UpdateUserBody,
          // Without user:write only one's own password may change: refuse other targets before the body.
          authorize: (principal, params) => authorizeUserUpdate(principal, params.userId ?? '', { username: false, permissions: false }),
        }),
        params: UserIdParams,
        query: NoQuery,
        detail: routeDoc({
          summary: 'Change a user',
          operationId: 'updateUser',
          tag: 'users',
          access: 'user:write',
          body: UpdateUserBodyDoc,
          description:
            'Any of username, password, permissions. Without `user:write`, a user may change only its own password, ' +
            "sending `currentPassword`. A password change ends the user's sessions (all but the caller's own when it is its own).",
          success: { status: 200, schema: UserSchema, description: 'The updated user' },
          errors: [400, 404, 409, 413, 415, 503],
        }),
      },
    )
    .delete(
      '/api/users/:userId',
      async ({ params, request }) => {
        await deps.users.remove(callerOf(request), params.userId)
        return { deleted: true, id: params.userId }
      },
      {
        ...guard(deps, { permission: 'user:write' }),
        params: UserIdParams,
        query: NoQuery,
        detail: routeDoc({
          summary: 'Delete a user',
          operationId: 'deleteUser',
          tag: 'users',
          access: 'user:write',
          description: 'Ends all its sessions. You cannot delete yourself or the last holder of user:write (409).',
          success: { status: 200, schema: DeletedById, description: 'The user was deleted' },
          errors: [400, 404, 409, 503],
        }),
      },
    )
}
