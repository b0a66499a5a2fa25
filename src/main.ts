#!/usr/bin/env bun
/** Entry point of `flagd` (and of `bun build --compile`): parses the command line, nothing else. */

import { flagdCommand } from './cli/flagd-command.ts'
import { runCli } from './cli/run-cli.ts'

void runCli(flagdCommand, process.argv.slice(2)).then((code) => process.exit(code))
