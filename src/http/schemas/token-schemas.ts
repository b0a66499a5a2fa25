/** Request and response models of API tokens (docs/api.md#api-tokens). */

import { t } from 'elysia'
import { PermissionSchema, Timestamp } from './common-schemas.ts'

const TokenName = t.String({ description: '1-64 characters of A-Z a-z 0-9 . _ - : and space; unique', example: 'ci deploy' })
const FlagPrefixes = t.Array(t.String(), {
  description:
    'Absent or [] for every flag; else 1-20 flag-name prefixes. Flags outside them do not exist for the token (404), writes to them are 403',
  example: ['mobile/', 'checkout/'],
})
const ExpiresAt = t.Union([Timestamp, t.Null()], {
  description: 'ISO 8601 date-time in the future; absent or null for no expiry',
  example: '2027-02-20T00:00:00.000Z',
})

/** The body of `POST /api/tokens` as validated: permissions stay strings so the service names an unknown one. */
export const CreateTokenBody = t.Object(
  {
    name: t.String(),
    permissions: t.Array(t.String()),
    expiresAt: t.Optional(t.Union([t.String(), t.Null()])),
    flagPrefixes: t.Optional(t.Array(t.String())),
    environment: t.Optional(t.Union([t.String(), t.Null()])),
  },
  { additionalProperties: false },
)

/** The documented form of the body. */
export const CreateTokenBodyDoc = t.Object(
  {
    name: TokenName,
    permissions: t.Array(PermissionSchema, { description: 'At most the permissions of the caller', example: ['flag:read', 'flag:write'] }),
    expiresAt: t.Optional(ExpiresAt),
    flagPrefixes: t.Optional(FlagPrefixes),
    environment: t.Optional(
      t.Union([t.String(), t.Null()], { description: 'The environment it evaluates; null or absent: the default one' }),
    ),
  },
  { additionalProperties: false },
)

const Creator = t.Object(
  {
    type: t.Union([t.Literal('user'), t.Literal('token'), t.Literal('system')]),
    id: t.String({ example: 'usr_3q2bqMWe2G9Zr0yLw1bXcg' }),
    name: t.String({ description: 'Username, token name, or the system part (cli)', example: 'alice' }),
  },
  { description: 'Who created the token' },
)

const tokenFields = {
  id: t.String({ example: 'tok_J8m2ZqL0c5R1vW7nX3yPbA' }),
  name: TokenName,
  permissions: t.Array(PermissionSchema, { example: ['flag:read', 'flag:write'] }),
  flagPrefixes: t.Array(t.String(), { example: ['mobile/'] }),
  environment: t.Union([t.String(), t.Null()], { description: 'The environment it evaluates; null: the default one' }),
  createdAt: Timestamp,
  createdBy: Creator,
  expiresAt: t.Union([Timestamp, t.Null()]),
  lastUsedAt: t.Union([Timestamp, t.Null()], { description: 'Precise to about a minute; null until first used' }),
}

/** A token as lists and reads show it: never the secret. */
export const TokenSchema = t.Object(tokenFields)

/** The answer of `POST /api/tokens`: the only time the secret is shown. */
export const NewTokenSchema = t.Object({
  token: t.String({
    description: 'The secret: fdt_ and 43 URL-safe characters. Shown once; send it as Authorization: Bearer <token> or X-API-Key: <token>',
    example: 'fdt_Q2hvb3NlIGEgbG9uZyByYW5kb20gc2VjcmV0IGhlcmUx',
  }),
  ...tokenFields,
})
