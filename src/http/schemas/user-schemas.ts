/** Request and response models of users, login and sessions. */

import { t } from 'elysia'
import { PermissionSchema, Timestamp } from './common-schemas.ts'

export const UserSchema = t.Object({
  id: t.String({ example: 'usr_3q2bqMWe2G9Zr0yLw1bXcg' }),
  username: t.String({ example: 'alice' }),
  permissions: t.Array(PermissionSchema, { example: ['flag:read', 'flag:write'] }),
  flagPrefixes: t.Array(t.String(), {
    description: 'The flag-name prefixes the person is confined to, as API tokens are; empty: every flag',
    example: [],
  }),
  source: t.Union([t.Literal('local'), t.Literal('oidc')], {
    description: 'local: a password here; oidc: signs in through the identity provider',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
})

const FlagPrefixes = t.Array(t.String(), {
  description: 'Confines the person to flags under these prefixes (mobile/, checkout/new_), at most 20; [] for every flag',
  example: ['mobile/'],
})

const Username = t.String({ description: '1-64 characters of A-Z a-z 0-9 . _ @ -, unique ignoring case', example: 'alice' })
const Password = t.String({ description: '8-1024 characters', example: 'correct horse battery' })

export const CreateUserBody = t.Object(
  {
    username: Username,
    password: Password,
    permissions: t.Optional(t.Array(t.String(), { example: ['flag:read'] })),
    flagPrefixes: t.Optional(t.Unknown()),
  },
  { additionalProperties: false },
)

/**
 * The documented forms of the user bodies: permissions as the enum. Validation keeps plain strings,
 * so that an unknown name is refused by the service with `details.field: "permissions"` (docs/api.md#permissions).
 */
export const CreateUserBodyDoc = t.Object(
  {
    username: Username,
    password: Password,
    permissions: t.Optional(t.Array(PermissionSchema, { example: ['flag:read'], description: 'Default: none' })),
    flagPrefixes: t.Optional(FlagPrefixes),
  },
  { additionalProperties: false },
)

export const UpdateUserBody = t.Object(
  {
    username: t.Optional(Username),
    password: t.Optional(Password),
    permissions: t.Optional(t.Array(t.String(), { example: ['flag:read', 'user:read'] })),
    flagPrefixes: t.Optional(t.Unknown()),
    currentPassword: t.Optional(t.String({ description: 'Required when changing your own password' })),
  },
  { additionalProperties: false },
)

/** The documented form of the update body (see CreateUserBodyDoc). */
export const UpdateUserBodyDoc = t.Object(
  {
    username: t.Optional(Username),
    password: t.Optional(Password),
    permissions: t.Optional(t.Array(PermissionSchema, { example: ['flag:read', 'user:read'] })),
    flagPrefixes: t.Optional(FlagPrefixes),
    currentPassword: t.Optional(t.String({ description: 'Required when changing your own password' })),
  },
  { additionalProperties: false },
)

// The example is not `admin`: example-driven testers would otherwise lock out the real admin.
export const LoginBody = t.Object(
  { username: t.String({ example: 'example-user' }), password: t.String({ example: 'correct horse battery' }) },
  { additionalProperties: false },
)

export const LoginResponse = t.Object({
  token: t.String({ description: 'JWT (HS256) to send as Authorization: Bearer <token>' }),
  user: t.Object({ id: t.String(), username: t.String(), permissions: t.Array(PermissionSchema) }),
  expiresAt: Timestamp,
})

export const SessionSchema = t.Object({
  id: t.String({ example: 'ses_4fJ0QmZ1rV2n8bC3dE5gHw' }),
  userId: t.String(),
  username: t.String(),
  createdAt: Timestamp,
  expiresAt: Timestamp,
  lastUsedAt: t.String({ format: 'date-time', description: 'Precise to about a minute' }),
  current: t.Boolean({ description: "True for the caller's own session" }),
})

export const HealthSchema = t.Object({
  status: t.Union([t.Literal('ok'), t.Literal('degraded')]),
  version: t.String({ example: '0.1.0' }),
  flags: t.Integer({ description: 'Number of flags', example: 42 }),
  oidc: t.Optional(
    t.Object(
      {
        status: t.Union([t.Literal('ok'), t.Literal('unavailable'), t.Literal('misconfigured')]),
        issuer: t.String(),
        reason: t.Optional(t.String({ description: 'Why the identity provider cannot be used' })),
      },
      { description: 'With single sign-on configured: whether its identity provider answers' },
    ),
  ),
})
