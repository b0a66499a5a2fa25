/** `flagd user add|list|passwd|delete`: manage users from a shell, whether or not the daemon runs. */

import { defineCommand } from 'citty'
import type { PublicUser } from '../domain/user.ts'
import { configArgs, withAdmin } from './common-args.ts'
import { readNewPassword } from './password-input.ts'
import { PERMISSIONS_HELP, parsePermissions } from './permission-arg.ts'
import { textTable } from './text-table.ts'
import { flagPrefixArgs } from './token-command.ts'

/** Formats users as an aligned table for a terminal. */
export function userTable(users: PublicUser[]): string {
  return textTable([
    ['ID', 'USERNAME', 'PERMISSIONS', 'CREATED'],
    ...users.map((u) => [u.id, u.username, u.permissions.join(',') || '-', u.createdAt]),
  ])
}

const addCommand = defineCommand({
  meta: { name: 'add', description: 'Create a user (prompts for the password on a terminal)' },
  args: {
    username: { type: 'positional', description: 'Name of the new user', required: true },
    permissions: { type: 'string', description: `${PERMISSIONS_HELP} (default: all)` },
    'password-stdin': { type: 'boolean', description: 'Read the password from standard input' },
    'flag-prefix': { type: 'string', description: 'Confine the person to flags under this prefix (repeat for more, up to 20)' },
    ...configArgs,
  },
  async run({ args, rawArgs }) {
    const permissions = parsePermissions(args.permissions ?? 'all')
    const flagPrefixes = flagPrefixArgs(rawArgs)
    const password = await readNewPassword(Boolean(args['password-stdin']))
    const input = { username: String(args.username), password, permissions, ...(flagPrefixes.length > 0 ? { flagPrefixes } : {}) }
    const user = await withAdmin(args, (admin) => admin.addUser(input), { mayInitialise: true })
    const scope = user.flagPrefixes.length > 0 ? `, confined to ${user.flagPrefixes.join(', ')}` : ''
    console.log(`created user ${user.username} (${user.id}) with permissions: ${user.permissions.join(', ') || 'none'}${scope}`)
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
    const { viaDaemon } = await withAdmin(args, async (admin, via) => ({
      ...(await admin.unlockUser(String(args.username))),
      viaDaemon: via,
    }))
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
