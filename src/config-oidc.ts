/**
 * `auth.oidc` (docs/single-sign-on.md#configuration): the identity provider the web UI signs people in
 * through. Checked at start like every key; whether the provider answers is found out at run time
 * (an unreachable one never stops the daemon: `/health` says so).
 */

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
  groupPermissions: Record<string, GroupGrant>
  defaultPermissions: string[]
  label: string
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
  const groups: Record<string, GroupGrant> = {}
  if (o.groupPermissions !== undefined) {
    if (typeof o.groupPermissions !== 'object' || o.groupPermissions === null) return bad('groupPermissions must be {group: [permissions]}')
    for (const [group, grant] of Object.entries(o.groupPermissions)) {
      if (strings(grant)) groups[group] = { permissions: grant as string[] }
      else if (typeof grant === 'object' && grant !== null && strings((grant as GroupGrant).permissions)) {
        const { permissions, flagPrefixes } = grant as GroupGrant
        if (flagPrefixes !== undefined && !strings(flagPrefixes))
          return bad(`groupPermissions.${group}.flagPrefixes must be a list of prefixes`)
        groups[group] = { permissions, ...(flagPrefixes !== undefined ? { flagPrefixes } : {}) }
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
  }
  return { ok: true, value: config }
}
