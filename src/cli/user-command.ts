/** `flagd user add|list`: manage users from a shell on the data directory. */

import { defineCommand } from 'citty'
import { openServices } from '../app.ts'
import { PERMISSIONS } from '../domain/permission.ts'
import type { PublicUser } from '../domain/user.ts'
import { configArgs, configFromArgs } from './common-args.ts'
import { readNewPassword } from './password-input.ts'

function parsePermissions(value: string | undefined): string[] {
  if (value === undefined || value === 'all') return [...PERMISSIONS]
  if (value === '' || value === 'none') return []
  return value.split(',').map((p) => p.trim())
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
    const config = await configFromArgs(args)
    const permissions = parsePermissions(args.permissions)
    const password = await readNewPassword(Boolean(args['password-stdin']))
    const { services, close } = await openServices(config)
    try {
      const user = await services.users.create({ username: String(args.username), password, permissions })
      console.log(`created user ${user.username} (${user.id}) with permissions: ${user.permissions.join(', ') || 'none'}`)
    } finally {
      await close()
    }
  },
})

const listCommand = defineCommand({
  meta: { name: 'list', description: 'List users' },
  args: { json: { type: 'boolean', description: 'Print JSON for scripts' }, ...configArgs },
  async run({ args }) {
    const config = await configFromArgs(args)
    const { services, close } = await openServices(config)
    try {
      const users = services.users.list()
      console.log(args.json ? JSON.stringify(users, null, 2) : userTable(users))
    } finally {
      await close()
    }
  },
})

export const userCommand = defineCommand({
  meta: { name: 'user', description: 'Manage users' },
  subCommands: { add: addCommand, list: listCommand },
})
