/** /api/users and /api/users/{userId} (docs/api.md#authentication). */

import { type Static, t } from 'elysia'
import { authorizeUserUpdate } from '../../domain/access-policy.ts'
import type { UserService } from '../../services/user-service.ts'
import { jsonAnswer } from '../answers.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { DeletedById, NoQuery } from '../schemas/common-schemas.ts'
import { CreateUserBody, CreateUserBodyDoc, UpdateUserBody, UpdateUserBodyDoc, UserSchema } from '../schemas/user-schemas.ts'

/** Dependencies of the user routes. */
export interface UserRouteDeps {
  users: UserService
  bodyLimit: number
}

const UserIdParams = t.Object({ userId: t.String({ description: 'User id', example: 'usr_3q2bqMWe2G9Zr0yLw1bXcg' }) })

/** The user routes. */
export function userRoutes(deps: UserRouteDeps): RouteSpec[] {
  const { users } = deps
  return [
    route({
      method: 'GET',
      path: '/api/users',
      permission: 'user:read',
      query: NoQuery,
      handle: (c) => users.list(c.auth),
      docs: {
        summary: 'List users',
        operationId: 'listUsers',
        tag: 'users',
        access: 'user:read',
        description: 'Sorted by lower-cased username.',
        success: { status: 200, schema: t.Array(UserSchema), description: 'All users' },
        errors: [400],
      },
    }),
    route({
      method: 'POST',
      path: '/api/users',
      permission: 'user:write',
      query: NoQuery,
      body: { limit: deps.bodyLimit, schema: CreateUserBody },
      async handle(c) {
        const user = await users.create(c.caller, c.body as Static<typeof CreateUserBody>)
        return jsonAnswer(c.id, JSON.stringify(user), 201, { location: `/api/users/${encodeURIComponent(user.id)}` })
      },
      docs: {
        summary: 'Create a user',
        operationId: 'createUser',
        tag: 'users',
        access: 'user:write',
        body: CreateUserBodyDoc,
        success: { status: 201, schema: UserSchema, description: 'The new user', headers: { Location: 'URL of the new user' } },
        errors: [400, 409, 413, 415, 503],
      },
    }),
    route({
      method: 'GET',
      path: '/api/users/:userId',
      permission: 'user:read',
      query: NoQuery,
      handle: (c) => users.get(c.auth, c.params.userId ?? ''),
      docs: {
        summary: 'Get a user',
        operationId: 'getUser',
        tag: 'users',
        access: 'user:read',
        params: UserIdParams,
        success: { status: 200, schema: UserSchema, description: 'The user' },
        errors: [400, 404],
      },
    }),
    route({
      method: 'PUT',
      path: '/api/users/:userId',
      // Without user:write only one's own password may change: refuse other targets before the body.
      authorize: (principal, params) => authorizeUserUpdate(principal, params.userId ?? '', { username: false, permissions: false }),
      query: NoQuery,
      body: { limit: deps.bodyLimit, schema: UpdateUserBody },
      handle: (c) => users.update(c.caller, c.params.userId ?? '', c.body as Static<typeof UpdateUserBody>),
      docs: {
        summary: 'Change a user',
        operationId: 'updateUser',
        tag: 'users',
        access: 'user:write',
        params: UserIdParams,
        body: UpdateUserBodyDoc,
        description:
          'Any of username, password, permissions. Without `user:write`, a user may change only its own password, ' +
          "sending `currentPassword`. A password change ends the user's sessions (all but the caller's own when it is its own).",
        success: { status: 200, schema: UserSchema, description: 'The updated user' },
        errors: [400, 404, 409, 413, 415, 503],
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/users/:userId',
      permission: 'user:write',
      query: NoQuery,
      async handle(c) {
        const id = c.params.userId ?? ''
        await users.remove(c.caller, id)
        return { deleted: true, id }
      },
      docs: {
        summary: 'Delete a user',
        operationId: 'deleteUser',
        tag: 'users',
        access: 'user:write',
        params: UserIdParams,
        description: 'Ends all its sessions. You cannot delete yourself or the last holder of user:write (409).',
        success: { status: 200, schema: DeletedById, description: 'The user was deleted' },
        errors: [400, 404, 409, 503],
      },
    }),
  ]
}
