/** The API token rules of the domain: secrets, names, prefixes, expiry, and visibility under a scope. */

import { expect, test } from 'bun:test'
import { can, canSeeFlag, visiblePrefixes } from '../../src/domain/access-policy.ts'
import {
  checkTokenName,
  hashTokenSecret,
  newTokenSecret,
  normalizeExpiry,
  normalizeFlagPrefixes,
  sameHash,
} from '../../src/domain/api-token.ts'
import type { TokenPrincipal } from '../../src/domain/principal.ts'

const token = (flagPrefixes: string[], permissions: TokenPrincipal['permissions'] = []): TokenPrincipal => ({
  kind: 'token',
  tokenId: 'tok_1',
  name: 't',
  permissions,
  flagPrefixes,
})

test('a secret is fdt_ and 43 URL-safe characters, hashed to 64 hex digits', () => {
  const secret = newTokenSecret()
  expect(secret).toMatch(/^fdt_[A-Za-z0-9_-]{43}$/)
  expect(hashTokenSecret(secret)).toMatch(/^[0-9a-f]{64}$/)
  expect(sameHash(hashTokenSecret(secret), hashTokenSecret(secret))).toBe(true)
  expect(sameHash(hashTokenSecret(secret), hashTokenSecret(`${secret}x`))).toBe(false)
})

test('names: the contract alphabet, 1-64 characters', () => {
  expect(checkTokenName('CI: deploy_prod-2.0')).toBe('CI: deploy_prod-2.0')
  for (const bad of ['', 'a/b', 'é', 'x'.repeat(65), 42, null]) expect(() => checkTokenName(bad)).toThrow()
})

test('prefixes are de-duplicated and sorted; bad ones are named by index', () => {
  expect(normalizeFlagPrefixes(undefined)).toEqual([])
  expect(normalizeFlagPrefixes(['b/', 'a/', 'b/'])).toEqual(['a/', 'b/'])
  expect(() => normalizeFlagPrefixes(['ok/', 'not ok'])).toThrow(
    expect.objectContaining({ details: expect.objectContaining({ field: 'flagPrefixes.1' }) }),
  )
})

test('expiry: a zoned date-time or a date in the future, never a rolled-over day', () => {
  const now = Date.parse('2026-11-22T00:00:00Z')
  expect(normalizeExpiry('2027-01-31T12:00:00+01:00', now)).toBe('2027-01-31T11:00:00.000Z')
  expect(normalizeExpiry('2027-01-31', now)).toBe('2027-01-31T00:00:00.000Z')
  expect(normalizeExpiry(null, now)).toBeNull()
  for (const bad of ['2027-02-30', '2027-13-01', '2027-01-31T24:00:00Z', '2027-01-31T12:00:00', '2026-11-21T00:00:00Z', 'soon', 5]) {
    expect(() => normalizeExpiry(bad, now), String(bad)).toThrow()
  }
})

test('visibility: a scoped token sees only flags under its prefixes', () => {
  const p = token(['mobile/', 'checkout/'])
  expect(canSeeFlag(p, 'mobile/a')).toBe(true)
  expect(canSeeFlag(p, 'mobilex')).toBe(false)
  expect(canSeeFlag(token([]), 'anything')).toBe(true)
})

test('visible prefixes: the query narrowed by each scope prefix, nested ones dropped, sorted', () => {
  expect(visiblePrefixes([], 'x')).toEqual(['x'])
  expect(visiblePrefixes(['m/', 'c/'], '')).toEqual(['c/', 'm/'])
  expect(visiblePrefixes(['m/', 'm/b/'], '')).toEqual(['m/'])
  expect(visiblePrefixes(['m/', 'c/'], 'm/b')).toEqual(['m/b'])
  expect(visiblePrefixes(['m/a', 'm/b'], 'm/')).toEqual(['m/a', 'm/b'])
  expect(visiblePrefixes(['m/'], 'w')).toEqual([])
})

test('flag:read grants flag:evaluate, not the other way round', () => {
  expect(can(token([], ['flag:read']), 'flag:evaluate')).toBe(true)
  expect(can(token([], ['flag:evaluate']), 'flag:read')).toBe(false)
})
