/**
 * API tokens (docs/api.md#api-tokens): long-lived credentials for applications, CI jobs and scripts. Only a
 * SHA-256 hash of the secret is ever kept (a secret has 256 random bits, so a fast hash is enough:
 * nobody can guess their way back from it), and the secret is shown once, when the token is made.
 */

import { createHash, timingSafeEqual } from 'node:crypto'
import { codePointCount } from './code-points.ts'
import { InvalidError } from './errors.ts'
import { NAME_MAX, nameProblem } from './flag-name.ts'
import { parseIsoInstant } from './iso-instant.ts'
import type { HeldPermission } from './permission.ts'
import type { Actor } from './principal.ts'

/** Who created a token: an audit actor (docs/api.md#audit-log). */
export type TokenCreator = Actor

/** A token as kept in the store. */
export interface StoredToken {
  id: string
  name: string
  /** SHA-256 of the whole secret (`fdt_…`), hex. */
  secretHash: string
  permissions: HeldPermission[]
  flagPrefixes: string[]
  /** The environment it evaluates (docs/environments.md); absent or null: the default one. */
  environment?: string | null
  createdAt: string
  createdBy: TokenCreator
  expiresAt: string | null
  lastUsedAt: string | null
}

/** A token as every API and CLI answer shows it: no secret, no hash. */
export type PublicToken = Omit<StoredToken, 'secretHash'>

/** What `POST /api/tokens` answers: the one time the secret is shown. */
export type NewToken = { token: string } & PublicToken

/** Every secret starts with this, so the auth guard tells tokens from session JWTs at a glance. */
export const TOKEN_PREFIX = 'fdt_'
export const TOKEN_NAME_MAX = 64
export const MAX_FLAG_PREFIXES = 20

const TOKEN_NAME = /^[A-Za-z0-9._: -]{1,64}$/
const PREFIX_CHARS = /^[A-Za-z0-9_./-]+$/

/** A new secret: `fdt_` and 43 URL-safe characters (32 random bytes). */
export function newTokenSecret(): string {
  return TOKEN_PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
}

/** The stored form of a secret. */
export function hashTokenSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

/** Compares two hex hashes in constant time (equal length is given: both are SHA-256). */
export function sameHash(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'))
}

/** Strips the hash from a stored token; `lastUsedAt` is the newest known use. */
export function toPublicToken(t: StoredToken, lastUsedAt: string | null = t.lastUsedAt): PublicToken {
  return {
    id: t.id,
    name: t.name,
    permissions: [...t.permissions],
    flagPrefixes: [...t.flagPrefixes],
    environment: t.environment ?? null,
    createdAt: t.createdAt,
    createdBy: { ...t.createdBy },
    expiresAt: t.expiresAt,
    lastUsedAt,
  }
}

/** Throws unless `name` is 1–64 characters of `A–Z a–z 0–9 . _ - :` and space. */
export function checkTokenName(name: unknown): string {
  if (typeof name !== 'string') throw new InvalidError('name must be a string', 'name', 'must be a string')
  if (name.length === 0) throw new InvalidError('name must not be empty', 'name', 'must not be empty')
  if (!TOKEN_NAME.test(name)) {
    const reason =
      codePointCount(name, TOKEN_NAME_MAX) > TOKEN_NAME_MAX
        ? `must be at most ${TOKEN_NAME_MAX} characters`
        : 'may contain only letters A-Z a-z, digits, space and . _ - :'
    throw new InvalidError(`token name ${reason}`, 'name', reason)
  }
  return name
}

/**
 * Checks `flagPrefixes` and returns them de-duplicated in code-point order: absent or `[]` for every
 * flag, else 1–20 prefixes of flag names (`mobile/`, `checkout/new_`), each 1–255 characters of the
 * flag-name alphabet and `/`.
 */
export function normalizeFlagPrefixes(input: unknown): string[] {
  if (input === undefined || input === null) return []
  if (!Array.isArray(input))
    throw new InvalidError('flagPrefixes must be an array of strings', 'flagPrefixes', 'must be an array of strings')
  if (input.length > MAX_FLAG_PREFIXES) {
    throw new InvalidError(
      `flagPrefixes holds at most ${MAX_FLAG_PREFIXES} prefixes`,
      'flagPrefixes',
      `at most ${MAX_FLAG_PREFIXES} prefixes`,
    )
  }
  input.forEach((p, i) => {
    const field = `flagPrefixes.${i}`
    if (typeof p !== 'string') throw new InvalidError(`${field} must be a string`, field, 'must be a string')
    if (p.length === 0)
      throw new InvalidError(`${field} must not be empty (leave flagPrefixes out for every flag)`, field, 'must not be empty')
    if (p.length > NAME_MAX)
      throw new InvalidError(`${field} must be at most ${NAME_MAX} characters`, field, `must be at most ${NAME_MAX} characters`)
    if (!PREFIX_CHARS.test(p))
      throw new InvalidError(
        `${field} may contain only the characters of flag names (A-Z a-z 0-9 _ - . /)`,
        field,
        'may contain only A-Z a-z 0-9 _ - . /',
      )
    // a group (`storefront/`) or a whole name (`storefront`: that flag or the group of that name, never
    // `storefrontx/…`; see inScope); either way of valid segments, so one no flag could match is refused
    const problem = nameProblem(p.endsWith('/') ? p.slice(0, -1) : p)
    if (problem !== undefined) throw new InvalidError(`${field} is not a group or a flag name: it ${problem}`, field, problem)
  })
  return [...new Set(input as string[])].sort()
}

/**
 * Checks `expiresAt`: an ISO 8601 date-time with a time zone (or a bare date, meaning its start in
 * UTC) in the future, or absent/null for no expiry. A date-time without a zone is refused: whose
 * midnight would it be? Returns the service's timestamp form (UTC with milliseconds).
 */
export function normalizeExpiry(input: unknown, nowMs: number): string | null {
  if (input === undefined || input === null) return null
  const text = typeof input === 'string' ? input : ''
  const at = parseIsoInstant(text)
  if (at === undefined) {
    throw new InvalidError(
      'expiresAt must be an ISO 8601 date-time with a time zone (2027-01-31T00:00:00Z) or a date (2027-01-31)',
      'expiresAt',
      'must be an ISO 8601 date-time',
    )
  }
  if (at <= nowMs) throw new InvalidError('expiresAt must be in the future', 'expiresAt', 'must be in the future')
  return new Date(at).toISOString()
}

const expiry = new WeakMap<StoredToken, number>()

/** True when the token has an expiry at or before `nowMs` (parsed once per stored row). */
export function isTokenExpired(t: StoredToken, nowMs: number): boolean {
  if (t.expiresAt === null) return false
  let at = expiry.get(t)
  if (at === undefined) expiry.set(t, (at = Date.parse(t.expiresAt)))
  return at <= nowMs
}
