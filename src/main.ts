#!/usr/bin/env bun
/** Entry point of `flagd` (and of `bun build --compile`): parses the command line, nothing else. */

import { defineCommand } from 'citty'
import { auditCommand } from './cli/audit-command.ts'
import { changeRequestCommand } from './cli/change-request-command.ts'
import { environmentCommand, promoteCommand } from './cli/environment-command.ts'
import { exportCommand, importCommand, validateCommand } from './cli/migration-commands.ts'
import { runCli } from './cli/run-cli.ts'
import { serveCommand } from './cli/serve-command.ts'
import { storageCommand } from './cli/storage-command.ts'
import { tokenCommand } from './cli/token-command.ts'
import { usageCommand } from './cli/usage-command.ts'
import { userCommand } from './cli/user-command.ts'
import { VERSION } from './version.ts'

const versionCommand = defineCommand({
  meta: { name: 'version', description: 'Print the flagd version' },
  run: () => console.log(VERSION),
})

const main = defineCommand({
  meta: { name: 'flagd', version: VERSION, description: 'Self-hosted feature-flag service' },
  subCommands: {
    serve: serveCommand,
    user: userCommand,
    token: tokenCommand,
    env: environmentCommand,
    promote: promoteCommand,
    'change-request': changeRequestCommand,
    audit: auditCommand,
    usage: usageCommand,
    export: exportCommand,
    import: importCommand,
    validate: validateCommand,
    storage: storageCommand,
    version: versionCommand,
  },
})

void runCli(main, process.argv.slice(2)).then((code) => process.exit(code))
