/** `flagd serve`: run the daemon until SIGTERM or SIGINT (the lifecycle is `daemon.ts`'s). */

import { defineCommand } from 'citty'
import { runDaemon } from '../daemon.ts'
import { configArgs, configFromArgs } from './common-args.ts'

export const serveCommand = defineCommand({
  meta: { name: 'serve', description: 'Run the flagd daemon' },
  args: {
    ...configArgs,
    host: { type: 'string', description: 'Address to listen on (default 127.0.0.1)' },
    port: { type: 'string', description: 'Port to listen on (default 8080)' },
  },
  async run({ args }) {
    await runDaemon(await configFromArgs(args))
  },
})
