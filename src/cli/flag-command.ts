/** `flagd flags archive|restore <name>` (docs/api.md#archive), whether the daemon runs or not. */

import { defineCommand } from 'citty'
import { configArgs, withAdmin } from './common-args.ts'

const nameArg = { type: 'positional', description: 'The flag name (app/checkout/new_flow)', required: true } as const

const archiveCommand = defineCommand({
  meta: {
    name: 'archive',
    description:
      'Archive a flag: kept with its states, usage and history, but unknown to every evaluation, sync and the flagd export; its name stays taken',
  },
  args: { name: nameArg, ...configArgs },
  async run({ args }) {
    const { name, revision } = await withAdmin(args, (admin) => admin.archiveFlag(String(args.name)))
    console.log(`archived flag ${name} (revision ${revision}); flagd flags restore ${name} brings it back`)
  },
})

const restoreCommand = defineCommand({
  meta: { name: 'restore', description: 'Restore an archived flag exactly as it was' },
  args: { name: nameArg, ...configArgs },
  async run({ args }) {
    const { name, revision } = await withAdmin(args, (admin) => admin.restoreFlag(String(args.name)))
    console.log(`restored flag ${name} (revision ${revision})`)
  },
})

/** `flagd flags …`. */
export const flagCommand = defineCommand({
  meta: { name: 'flags', description: 'Archive and restore flags (create and change them over the API or the web UI)' },
  subCommands: { archive: archiveCommand, restore: restoreCommand },
})
