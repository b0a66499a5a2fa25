/**
 * `flagd token add|list|revoke` (docs/api.md#api-tokens): API tokens from a shell, whether or not the daemon
 * runs. `token add` prints the secret alone on stdout, so `TOKEN=$(flagd token add …)` works;
 * everything meant for a person goes to stderr.
 */

import { defineCommand } from 'citty'
import type { PublicToken } from '../domain/api-token.ts'
import { systemClock } from '../system-clock.ts'
import { configArgs, withAdmin } from './common-args.ts'
import { PERMISSIONS_HELP, parsePermissions } from './permission-arg.ts'
import { textTable } from './text-table.ts'
import { UsageError } from './usage-error.ts'

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000, y: 365 * 86_400_000 }

/**
 * `--expires`: a duration from now (`30m`, `12h`, `90d`, `4w`, `1y`) or an ISO 8601 date or
 * date-time, which the service checks like the API's `expiresAt`.
 */
export function parseExpires(value: string, nowMs: number): string {
  const duration = /^(\d{1,6})([mhdwy])$/.exec(value.trim())
  if (duration) {
    const amount = Number(duration[1])
    if (amount === 0) throw new UsageError('--expires must be more than zero')
    return new Date(nowMs + amount * (UNIT_MS[duration[2] as string] as number)).toISOString()
  }
  if (/^\d{4}-\d{2}-\d{2}/.test(value)) return value
  throw new UsageError(`--expires takes a duration such as 90d, 12h, 4w or 1y, or an ISO 8601 date; got ${JSON.stringify(value)}`)
}

/** Every `--flag-prefix` value (citty keeps only the last of a repeated option), commas splitting too. */
export function flagPrefixArgs(rawArgs: readonly string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i] as string
    if (arg === '--') break
    let value: string | undefined
    if (arg === '--flag-prefix') value = rawArgs[++i]
    else if (arg.startsWith('--flag-prefix=')) value = arg.slice('--flag-prefix='.length)
    else continue
    if (value === undefined || value.startsWith('--')) throw new UsageError('--flag-prefix needs a value, e.g. --flag-prefix mobile/')
    out.push(
      ...value
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p !== ''),
    )
  }
  return out
}

/** Tokens as an aligned table; a token of no environment evaluates the default one. */
export function tokenTable(tokens: PublicToken[]): string {
  return textTable([
    ['ID', 'NAME', 'PERMISSIONS', 'FLAG PREFIXES', 'ENVIRONMENT', 'EXPIRES', 'LAST USED'],
    ...tokens.map((t) => [
      t.id,
      t.name,
      t.permissions.join(',') || '-',
      t.flagPrefixes.join(',') || '(all)',
      t.environment ?? '(default)',
      t.expiresAt ?? 'never',
      t.lastUsedAt ?? 'never',
    ]),
  ])
}

const addCommand = defineCommand({
  meta: { name: 'add', description: 'Create an API token and print its secret (once) on stdout' },
  args: {
    name: { type: 'positional', description: 'Name of the token (1-64 characters of A-Z a-z 0-9 . _ - : and space)', required: true },
    permissions: { type: 'string', description: `${PERMISSIONS_HELP} (required)` },
    expires: { type: 'string', description: 'Expiry: a duration (30m, 12h, 90d, 4w, 1y) or an ISO 8601 date; default: never' },
    'flag-prefix': { type: 'string', description: 'Confine the token to flags under this prefix (repeat for more, up to 20)' },
    environment: { type: 'string', description: 'The environment it evaluates (default: the default environment)' },
    ...configArgs,
  },
  async run({ args, rawArgs }) {
    if (args.permissions === undefined)
      throw new UsageError(`--permissions is required: ${PERMISSIONS_HELP} (for an application: --permissions flag:evaluate)`)
    const permissions = parsePermissions(args.permissions)
    const flagPrefixes = flagPrefixArgs(rawArgs)
    const input = {
      name: String(args.name),
      permissions,
      ...(args.expires === undefined ? {} : { expiresAt: parseExpires(args.expires, systemClock().getTime()) }),
      ...(flagPrefixes.length > 0 ? { flagPrefixes } : {}),
      ...(args.environment === undefined ? {} : { environment: String(args.environment) }),
    }
    const token = await withAdmin(args, (admin) => admin.addToken(input))
    process.stdout.write(`${token.token}\n`)
    const scope = token.flagPrefixes.length > 0 ? `flags under ${token.flagPrefixes.join(', ')}` : 'every flag'
    console.error(
      `created token ${token.name} (${token.id}) with permissions: ${token.permissions.join(', ') || 'none'}; ${scope}; expires ${token.expiresAt ?? 'never'}.\n` +
        'The secret above is shown once: store it now (send it as Authorization: Bearer <token> or X-API-Key: <token>).',
    )
  },
})

const listCommand = defineCommand({
  meta: { name: 'list', description: 'List API tokens (a table on a terminal, --json for scripts); never their secrets' },
  args: { json: { type: 'boolean', description: 'Print JSON' }, ...configArgs },
  async run({ args }) {
    const tokens = await withAdmin(args, (admin) => admin.listTokens())
    console.log(args.json ? JSON.stringify(tokens, null, 2) : tokenTable(tokens))
  },
})

const revokeCommand = defineCommand({
  meta: { name: 'revoke', description: 'Revoke an API token by id or name; it is refused from the next request' },
  args: { token: { type: 'positional', description: 'The token id (tok_…) or name', required: true }, ...configArgs },
  async run({ args }) {
    const token = await withAdmin(args, (admin) => admin.revokeToken(String(args.token)))
    console.log(`revoked token ${token.name} (${token.id})`)
  },
})

export const tokenCommand = defineCommand({
  meta: { name: 'token', description: 'Manage API tokens for applications, CI jobs and scripts' },
  subCommands: { add: addCommand, list: listCommand, revoke: revokeCommand },
})
