/** The `flagd` command tree: every command the binary and `src/main.ts` run (docs/operations.md). */

import { defineCommand } from 'citty'
import { VERSION } from '../version.ts'
import { auditCommand } from './audit-command.ts'
import { backupCommand } from './backup-command.ts'
import { changeRequestCommand } from './change-request-command.ts'
import { environmentCommand, promoteCommand } from './environment-command.ts'
import { flagCommand } from './flag-command.ts'
import { exportCommand, importCommand, validateCommand } from './migration-commands.ts'
import { serveCommand } from './serve-command.ts'
import { storageCommand } from './storage-command.ts'
import { tokenCommand } from './token-command.ts'
import { usageCommand } from './usage-command.ts'
import { userCommand } from './user-command.ts'

const versionCommand = defineCommand({
  meta: { name: 'version', description: 'Print the flagd version' },
  run: () => console.log(VERSION),
})

/** The root command; `runCli(flagdCommand, argv)` runs a command line against it. */
export const flagdCommand = defineCommand({
  meta: { name: 'flagd', version: VERSION, description: 'Self-hosted feature-flag service' },
  subCommands: {
    serve: serveCommand,
    user: userCommand,
    token: tokenCommand,
    env: environmentCommand,
    flags: flagCommand,
    promote: promoteCommand,
    'change-request': changeRequestCommand,
    audit: auditCommand,
    usage: usageCommand,
    export: exportCommand,
    import: importCommand,
    validate: validateCommand,
    storage: storageCommand,
    backup: backupCommand,
    version: versionCommand,
  },
})
