/** `flagd storage copy --to postgres://…`: move a data directory into PostgreSQL (contract §18). */

import { defineCommand } from 'citty'
import { copyToPostgres } from '../storage/copy-to-postgres.ts'
import { DirectoryInUseError } from '../storage/file-lock.ts'
import { redactedUrl } from '../storage/redacted-url.ts'
import { configArgs, configFromArgs } from './common-args.ts'

const copyCommand = defineCommand({
  meta: { name: 'copy', description: 'Copy everything in the data directory (daemon stopped) into an empty PostgreSQL database' },
  args: {
    to: {
      type: 'string',
      description: 'postgres://user:password@host:5432/database (default: storage.postgresUrl, FLAGD_STORAGE_POSTGRES_URL)',
    },
    ...configArgs,
  },
  async run({ args }) {
    const config = await configFromArgs(args)
    const url = args.to ?? config.storage.postgresUrl
    if (!url) throw new Error('say where to copy to: --to postgres://user:password@host:5432/database')
    if (!/^postgres(ql)?:\/\//.test(url)) throw new Error('--to must be a postgres:// or postgresql:// URL')
    try {
      const copied = await copyToPostgres(config.dataDir, url)
      console.error(
        `flagd: copied ${copied.flags} flags, ${copied.users} users, ${copied.sessions} sessions, ${copied.tokens} API tokens, ` +
          `${copied.auditEntries} audit entries (revision ${copied.revision}) and the signing secret from ${config.dataDir} into ${redactedUrl(url)}.\n` +
          'Start every replica with FLAGD_STORAGE_POSTGRES_URL set to that URL; the data directory is left as it was.',
      )
    } catch (err) {
      if (err instanceof DirectoryInUseError)
        throw new Error(`a daemon is running on ${config.dataDir}: stop it first, so that nothing changes during the copy`)
      throw err
    }
  },
})

export const storageCommand = defineCommand({
  meta: { name: 'storage', description: 'Storage administration: copy a data directory into PostgreSQL' },
  subCommands: { copy: copyCommand },
})
