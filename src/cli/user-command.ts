/** `flagd user add|list|passwd|delete`: manage users from a shell, whether or not the daemon runs. */

import { defineCommand } from 'citty'
import { PERMISSIONS } from '../domain/permission.ts'
import type { PublicUser } from '../domain/user.ts'
import { configArgs, withAdmin } from './common-args.ts'
import { UsageError } from './usage-error.ts'
import { readNewPassword } from './password-input.ts'

/** `--permissions`: "all", "none" or a comma list; an unknown name is a usage mistake (exit 2). */
function parsePermissions(value: string | undefined): string[] {
  if (value === undefined || value === 'all') return [...PERMISSIONS]
  if (value === '' || value === 'none') return []
  const names = value.split(',').map((p) => p.trim())
  const unknown = names.find((p) => !(PERMISSIONS as readonly string[]).includes(p))
  if (unknown !== undefined) throw new UsageError(`unknown permission ${JSON.stringify(unknown)} in --permissions; known: ${PERMISSIONS.join(', ')}`)
  return names
}

/** Formats users as an aligned table for a terminal. */
export function userTable(users: PublicUser[]): string {
  const rows = [['ID', 'USERNAME', 'PERMISSIONS', 'CREATED'], ...users.map((u) => [u.id, u.username, u.permissions.join(',') || '-', u.createdAt])]
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? []
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()).join('\n')
}

const addCommand = defineCommand({
  meta: { name: 'add', description: 'Create a user (prompts for the password on a terminal)' },
  args: {
    username: { type: 'positional', description: 'Name of the new user', required: true },
    permissions: { type: 'string', description: `"all" (default), "none", or a comma list of: ${PERMISSIONS.join(', ')}` },
    'password-stdin': { type: 'boolean', description: 'Read the password from standard input' },
    ...configArgs,
  },
  async run({ args }) {
    const permissions = parsePermissions(args.permissions)
    const password = await readNewPassword(Boolean(args['password-stdin']))
    const user = await withAdmin(args, (admin) => admin.addUser({ username: String(args.username), password, permissions }), { mayInitialise: true })
    console.log(`created user ${user.username} (${user.id}) with permissions: ${user.permissions.join(', ') || 'none'}`)
  },
})

const listCommand = defineCommand({
  meta: { name: 'list', description: 'List users (a table on a terminal, --json for scripts)' },
  args: { json: { type: 'boolean', description: 'Print JSON' }, ...configArgs },
  async run({ args }) {
    const users = await withAdmin(args, (admin) => admin.listUsers())
    console.log(args.json ? JSON.stringify(users, null, 2) : userTable(users))
  },
})

const passwdCommand = defineCommand({
  meta: { name: 'passwd', description: "Set a user's password (ends all of that user's sessions)" },
  args: {
    username: { type: 'positional', description: 'The user', required: true },
    'password-stdin': { type: 'boolean', description: 'Read the new password from standard input' },
    ...configArgs,
  },
  async run({ args }) {
    const password = await readNewPassword(Boolean(args['password-stdin']))
    const user = await withAdmin(args, (admin) => admin.setPassword(String(args.username), password))
    console.log(`password of ${user.username} changed; its sessions have ended`)
  },
})

const deleteCommand = defineCommand({
  meta: { name: 'delete', description: 'Delete a user and end its sessions' },
  args: { username: { type: 'positional', description: 'The user', required: true }, ...configArgs },
  async run({ args }) {
    const user = await withAdmin(args, (admin) => admin.deleteUser(String(args.username)))
    console.log(`deleted user ${user.username} (${user.id})`)
  },
})

const unlockCommand = defineCommand({
  meta: { name: 'unlock', description: "Clear a username's failed-login counts (after a lockout)" },
  args: { username: { type: 'positional', description: 'The username', required: true }, ...configArgs },
  async run({ args }) {
    const { viaDaemon } = await withAdmin(args, async (admin, via) => ({ ...(await admin.unlockUser(String(args.username))), viaDaemon: via }))
    console.log(
      viaDaemon
        ? `failed-login counts of ${args.username} cleared; it can log in again from every address`
        : `no daemon is running on this data directory; failed-login counts live in the daemon's memory and start empty, so ${args.username} is not locked out`,
    )
  },
})

export const userCommand = defineCommand({
  meta: { name: 'user', description: 'Manage users' },
  subCommands: { add: addCommand, list: listCommand, passwd: passwdCommand, delete: deleteCommand, unlock: unlockCommand },
})
