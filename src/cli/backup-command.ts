/**
 * `flagd backup --out FILE` (docs/operations.md#backups): everything stored, written atomically as a
 * state file, with every change acknowledged before the command ran, whether the daemon is running
 * (through its control socket) or not. Restoring is putting the file back as `flagd.json` in an
 * empty data directory, or with `changes/` moved away.
 */

import { resolve } from 'node:path'
import { defineCommand } from 'citty'
import { writeFileAtomic } from '../io/atomic-write.ts'
import { configArgs, withAdmin } from './common-args.ts'
import { countNoun } from './count-noun.ts'
import { UsageError } from './usage-error.ts'

export const backupCommand = defineCommand({
  meta: { name: 'backup', description: 'Write a consistent copy of everything stored (the state file, with recent changes) to --out FILE' },
  args: {
    out: { type: 'string', description: 'File to write (atomically, mode 0600); it holds password hashes: keep it private' },
    ...configArgs,
  },
  async run({ args }) {
    if (!args.out) throw new UsageError('flagd backup needs --out FILE (the backup holds password hashes, so it is never printed)')
    const backup = await withAdmin(args, (admin) => admin.backupState())
    await writeFileAtomic(resolve(args.out), backup.text)
    console.error(`wrote a backup of revision ${backup.revision} (${countNoun(backup.flags, 'flag')}) to ${args.out}`)
  },
})
