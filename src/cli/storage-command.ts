/** `flagd storage copy --to postgres://…`: move a data directory into PostgreSQL (docs/operations.md#replicas). */

import { defineCommand } from 'citty'
import { copyDataDirToPostgres } from '../admin-access.ts'
import { redactedUrl } from '../domain/redacted-url.ts'
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
    const copied = await copyDataDirToPostgres(config, url)
    console.error(
      `flagd: copied ${copied.flags} flags, ${copied.users} users, ${copied.sessions} sessions, ${copied.tokens} API tokens, ` +
        `${copied.auditEntries} audit entries (revision ${copied.revision}) and the signing secret from ${config.dataDir} into ${redactedUrl(url)}.\n` +
        'Start every replica with FLAGD_STORAGE_POSTGRES_URL set to that URL; the data directory is left as it was.',
    )
  },
})

export const storageCommand = defineCommand({
  meta: { name: 'storage', description: 'Storage administration: copy a data directory into PostgreSQL' },
  subCommands: { copy: copyCommand },
})
