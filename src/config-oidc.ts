/**
 * `auth.oidc` (docs/single-sign-on.md#configuration): the identity provider the web UI signs people in
 * through. Checked at start like every key; whether the provider answers is found out at run time
 * (an unreachable one never stops the daemon: `/health` says so).
 */

import ipaddr from 'ipaddr.js'

/** One group's grant: permissions, and optionally the flag prefixes its members are confined to. */
export interface GroupGrant {
  permissions: string[]
  /** Absent: the group confines no one. */
  flagPrefixes?: string[]
}

/** The provider and how its people become users. */
export interface OidcConfig {
  issuer: string
  clientId: string
  clientSecret: string
  scopes: string
  usernameClaim: string | undefined
  groupsClaim: string
  /** Keyed by the provider's group names, which are anyone's to choose: a map, so none is an object's built-in property. */
  groupPermissions: ReadonlyMap<string, GroupGrant>
  defaultPermissions: string[]
  label: string
  /** Where the provider sends the browser back; absent: the listen address's (docs/single-sign-on.md#the-redirect-uri). */
  redirectUri: string | undefined
}

type Result = { ok: true; value: unknown } | { ok: false; reason: string }
const bad = (reason: string): Result => ({ ok: false, reason })
const FIELDS = [
  'issuer',
  'clientId',
  'clientSecret',
  'scopes',
  'usernameClaim',
  'groupsClaim',
  'groupPermissions',
  'defaultPermissions',
  'label',
  'redirectUri',
]
const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string')

/** Parses `auth.oidc` (an object, or JSON text in `FLAGD_AUTH_OIDC`); absent: no single sign-on. */
export function parseOidcConfig(raw: unknown): Result {
  if (raw === undefined || raw === '') return { ok: true, value: undefined }
  let value = raw
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw)
    } catch {
      return bad('must be a JSON object {issuer, clientId, clientSecret, …}')
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return bad('must be an object {issuer, clientId, clientSecret, …}')
  const o = value as Record<string, unknown>
  const unknown = Object.keys(o).find((k) => !FIELDS.includes(k))
  if (unknown !== undefined) return bad(`has an unknown field "${unknown}" (known: ${FIELDS.join(', ')})`)
  let issuer: URL | undefined
  try {
    issuer = typeof o.issuer === 'string' ? new URL(o.issuer) : undefined
  } catch {
    issuer = undefined
  }
  if (!issuer || (issuer.protocol !== 'https:' && issuer.protocol !== 'http:')) return bad('needs issuer: the provider’s https:// address')
  if (typeof o.clientId !== 'string' || o.clientId === '') return bad('needs clientId')
  if (typeof o.clientSecret !== 'string' || o.clientSecret === '') return bad('needs clientSecret')
  for (const key of ['scopes', 'usernameClaim', 'groupsClaim', 'label'])
    if (o[key] !== undefined && (typeof o[key] !== 'string' || o[key] === '')) return bad(`${key} must be a non-empty string`)
  if (o.defaultPermissions !== undefined && !strings(o.defaultPermissions)) return bad('defaultPermissions must be a list of permissions')
  let redirectUri: string | undefined
  if (o.redirectUri !== undefined) {
    const url = typeof o.redirectUri === 'string' ? URL.parse(o.redirectUri) : null
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.hash !== '' || url.search !== '')
      return bad('redirectUri must be the http(s):// address of flagd’s /api/auth/oidc/callback, without query or fragment')
    redirectUri = url.href
  }
  const groups = new Map<string, GroupGrant>()
  if (o.groupPermissions !== undefined) {
    if (typeof o.groupPermissions !== 'object' || o.groupPermissions === null) return bad('groupPermissions must be {group: [permissions]}')
    for (const [group, grant] of Object.entries(o.groupPermissions)) {
      if (strings(grant)) groups.set(group, { permissions: grant as string[] })
      else if (typeof grant === 'object' && grant !== null && strings((grant as GroupGrant).permissions)) {
        const { permissions, flagPrefixes } = grant as GroupGrant
        if (flagPrefixes !== undefined && !strings(flagPrefixes))
          return bad(`groupPermissions.${group}.flagPrefixes must be a list of prefixes`)
        groups.set(group, { permissions, ...(flagPrefixes !== undefined ? { flagPrefixes } : {}) })
      } else return bad(`groupPermissions.${group} must be [permissions] or {permissions, flagPrefixes}`)
    }
  }
  const config: OidcConfig = {
    issuer: issuer.href.replace(/\/$/, ''),
    clientId: o.clientId,
    clientSecret: o.clientSecret,
    scopes: (o.scopes as string | undefined) ?? 'openid profile email',
    usernameClaim: o.usernameClaim as string | undefined,
    groupsClaim: (o.groupsClaim as string | undefined) ?? 'groups',
    groupPermissions: groups,
    defaultPermissions: (o.defaultPermissions as string[] | undefined) ?? [],
    label: (o.label as string | undefined) ?? 'Sign in with SSO',
    redirectUri,
  }
  return { ok: true, value: config }
}

/**
 * The redirect URI flagd registers with the provider: `auth.oidc.redirectUri`, else the configured
 * listen address's callback; never a request's `Host` (docs/single-sign-on.md#the-redirect-uri).
 * A wildcard or port-0 listen address names no address a provider could send a browser to: then
 * answers the problem instead.
 */
export function redirectUriFor(oidc: OidcConfig, host: string, port: number): { uri: string } | { problem: string } {
  if (oidc.redirectUri !== undefined) return { uri: oidc.redirectUri }
  const bare = host.replace(/^\[(.*)\]$/, '$1')
  const wildcard = bare === '' || (ipaddr.isValid(bare) && ipaddr.parse(bare).range() === 'unspecified')
  if (wildcard || port === 0)
    return {
      problem: `auth.oidc.redirectUri is needed: flagd listens on ${wildcard ? `every address (${host || 'any'})` : 'a port picked at start'}, which names no address the identity provider could send the browser back to`,
    }
  return { uri: `http://${bare.includes(':') ? `[${bare}]` : bare}:${port}/api/auth/oidc/callback` }
}
