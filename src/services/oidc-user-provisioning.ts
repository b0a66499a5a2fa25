/**
 * Who a person signed in by single sign-on is in flagd (docs/single-sign-on.md): a built-in user of
 * source `oidc`, matched by issuer and subject, whose permissions (and flag prefixes) come from their
 * groups at every sign-in.
 */

import type { OidcConfig } from '../config-oidc.ts'
import { normalizeFlagPrefixes } from '../domain/api-token.ts'
import type { Clock } from '../domain/clock.ts'
import { newId } from '../domain/new-id.ts'
import { normalizePermissions } from '../domain/permission.ts'
import { systemPrincipal } from '../domain/principal.ts'
import { checkUsername, type StoredUser } from '../domain/user.ts'
import type { Store } from '../storage/store.ts'
import { commitMeta } from './commit-meta.ts'
import { OidcFailure } from './oidc-failure.ts'
import { findUserByName } from './user-service.ts'

/** A claim the token or userinfo itself holds (never an object's built-in property of that name). */
export const claimOf = (claims: Record<string, unknown>, name: string): unknown => (Object.hasOwn(claims, name) ? claims[name] : undefined)

/** The user this person is, made or brought up to date from their claims (`OidcFailure` when the claims do not name one flagd can use). */
export async function provisionOidcUser(
  deps: { config: OidcConfig; store: Store; now: Clock },
  claims: Record<string, unknown>,
): Promise<StoredUser> {
  const { config: cfg, store, now } = deps
  const subject = claims.sub
  const name =
    cfg.usernameClaim !== undefined
      ? claimOf(claims, cfg.usernameClaim)
      : (claimOf(claims, 'preferred_username') ?? claimOf(claims, 'email'))
  if (typeof subject !== 'string' || subject === '')
    throw new OidcFailure('The identity provider did not say who you are (no subject).', 'missing claim sub')
  if (typeof name !== 'string' || name === '')
    throw new OidcFailure(
      `The identity provider did not send your username (${cfg.usernameClaim ?? 'preferred_username or email'}).`,
      'missing username claim',
    )
  try {
    checkUsername(name)
  } catch {
    throw new OidcFailure(`Your username from the identity provider, ${JSON.stringify(name)}, is not one flagd can use.`, 'bad username')
  }
  const listed = claimOf(claims, cfg.groupsClaim)
  const groups = Array.isArray(listed) ? listed.filter((g): g is string => typeof g === 'string') : []
  // a map: a group named "constructor" or "__proto__" is only a name (docs/single-sign-on.md#configuration)
  const grants = groups.flatMap((g) => cfg.groupPermissions.get(g) ?? [])
  const environments = store.committed().environments
  let permissions: StoredUser['permissions']
  let flagPrefixes: string[]
  try {
    permissions = normalizePermissions(
      [...cfg.defaultPermissions, ...grants.flatMap((g) => g?.permissions ?? [])],
      'groupPermissions',
      (e) => environments.has(e),
    )
    // the union of the groups' prefixes; one group that confines no one confines nobody
    const unconfined = grants.length === 0 || grants.some((g) => g?.flagPrefixes === undefined || g.flagPrefixes.length === 0)
    flagPrefixes = unconfined ? [] : normalizeFlagPrefixes([...new Set(grants.flatMap((g) => g?.flagPrefixes ?? []))])
  } catch (err) {
    throw new OidcFailure('flagd’s single sign-on is misconfigured (group permissions): ask an administrator.', (err as Error).message)
  }
  const at = now().toISOString()
  const { result } = await store.transact(commitMeta({ principal: systemPrincipal('sso'), requestId: newId('sso') }), (tx) => {
    const known = [...tx.read.users.values()].find((u) => u.oidc?.issuer === cfg.issuer && u.oidc.subject === subject)
    const holder = findUserByName(tx.read, name)
    if (holder && holder.id !== known?.id)
      throw new OidcFailure(
        `The username ${name} belongs to another flagd user: ask an administrator to rename one of you.`,
        `username clash with ${holder.id}`,
      )
    const user: StoredUser = {
      id: known?.id ?? newId('usr'),
      username: name,
      passwordHash: '',
      permissions,
      ...(flagPrefixes.length > 0 ? { flagPrefixes } : {}),
      source: 'oidc',
      oidc: { issuer: cfg.issuer, subject },
      createdAt: known?.createdAt ?? at,
      updatedAt: at,
    }
    const same = known && JSON.stringify({ ...known, updatedAt: '' }) === JSON.stringify({ ...user, updatedAt: '' })
    if (!same) tx.put('users', user)
    return same ? (known as StoredUser) : user
  })
  return result
}
