/** `flagd env list|add|remove` and `flagd promote` (docs/environments.md), whether the daemon runs or not. */

import { defineCommand } from 'citty'
import { configArgs, withAdmin } from './common-args.ts'
import { textTable } from './text-table.ts'
import { UsageError } from './usage-error.ts'

const listCommand = defineCommand({
  meta: { name: 'list', description: 'List the environments (a table on a terminal, --json for scripts)' },
  args: { json: { type: 'boolean', description: 'Print JSON' }, ...configArgs },
  async run({ args }) {
    const environments = await withAdmin(args, (admin) => admin.listEnvironments())
    if (args.json) return console.log(JSON.stringify(environments, null, 2))
    console.log(
      textTable([
        ['ENVIRONMENT', 'DEFAULT', 'PROTECTED', 'DESCRIPTION'],
        ...environments.map((e) => [e.name, e.default ? 'default' : '', e.protected ? 'protected' : '', e.description]),
      ]),
    )
  },
})

const addCommand = defineCommand({
  meta: { name: 'add', description: "Create an environment; every flag starts with the default environment's state (or --copy-from's)" },
  args: {
    name: { type: 'positional', description: 'Its name (1-64 of A-Z a-z 0-9 . _ -)', required: true },
    description: { type: 'string', description: 'What it is for' },
    'copy-from': { type: 'string', description: 'The environment whose flag states it starts with (default: the default environment)' },
    ...configArgs,
  },
  async run({ args }) {
    const input = {
      ...(args.description === undefined ? {} : { description: String(args.description) }),
      ...(args['copy-from'] === undefined ? {} : { copyFrom: String(args['copy-from']) }),
    }
    const { environment, created } = await withAdmin(args, (admin) => admin.putEnvironment(String(args.name), input))
    console.log(`${created ? 'created' : 'changed'} environment ${environment.name}`)
  },
})

const removeCommand = defineCommand({
  meta: { name: 'remove', description: 'Remove an environment and its flag states (never the default one)' },
  args: { name: { type: 'positional', description: 'The environment', required: true }, ...configArgs },
  async run({ args }) {
    const { name } = await withAdmin(args, (admin) => admin.removeEnvironment(String(args.name)))
    console.log(`removed environment ${name}`)
  },
})

export const environmentCommand = defineCommand({
  meta: { name: 'env', description: 'Manage the environments this flagd holds (development, staging, production…)' },
  subCommands: { list: listCommand, add: addCommand, remove: removeCommand },
})

export const promoteCommand = defineCommand({
  meta: {
    name: 'promote',
    description: 'Copy flag states from one environment to another in one commit (all flags, those under --prefix, or those named)',
  },
  args: {
    from: { type: 'string', description: 'The environment copied from (required)' },
    to: { type: 'string', description: 'The environment copied into (required)' },
    prefix: { type: 'string', description: 'Only flags whose name starts with this' },
    'dry-run': { type: 'boolean', description: 'Show what would change; change nothing' },
    json: { type: 'boolean', description: 'Print JSON' },
    ...configArgs,
  },
  async run({ args }) {
    if (args.from === undefined || args.to === undefined)
      throw new UsageError('--from and --to are required, e.g. flagd promote --from staging --to production')
    const flags = (args._ as string[]).map(String)
    const input = {
      from: String(args.from),
      ...(flags.length > 0 ? { flags } : {}),
      ...(args.prefix === undefined ? {} : { prefix: String(args.prefix) }),
      ...(args['dry-run'] ? { dryRun: true } : {}),
    }
    const result = await withAdmin(args, (admin) => admin.promote(String(args.to), input))
    if (args.json) return console.log(JSON.stringify(result, null, 2))
    const verb = result.dryRun ? 'would change' : 'changed'
    for (const c of result.changes)
      console.log(
        `${c.name}: ${Object.entries(c.diff)
          .map(([field, d]) => `${field} ${JSON.stringify(d.before)} → ${JSON.stringify(d.after)}`)
          .join(', ')}`,
      )
    console.log(`${verb} ${result.changes.length} flag(s) in ${args.to}; ${result.unchanged} already equal`)
    // docs/change-control.md#dry-runs
    if (result.applyError) console.log(`applying it would be refused: ${result.applyError.message}`)
  },
})
