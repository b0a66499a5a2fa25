/** `flagd serve`: run the daemon until SIGTERM or SIGINT. */

import { defineCommand } from 'citty'
import { bootstrapAdmin, createApp, listen, type App, type Listener } from '../app.ts'
import { VERSION } from '../version.ts'
import { configArgs, configFromArgs } from './common-args.ts'

const SHUTDOWN_GRACE_MS = 10_000

function log(line: string): void {
  console.log(`flagd: ${line}`)
}

/** Resolves once a signal stopped the server gracefully and the store is closed. */
function untilStopped(listener: Listener, app: App): Promise<void> {
  return new Promise((resolve) => {
    let stopping = false
    const onSignal = (signal: string) => {
      if (stopping) {
        log(`${signal} again: exiting now`)
        process.exit(1)
      }
      stopping = true
      log(`${signal}: finishing in-flight requests, then exiting`)
      void listener
        .stop(SHUTDOWN_GRACE_MS)
        .then(() => app.close())
        .then(() => {
          log('stopped')
          resolve()
        })
    }
    process.on('SIGTERM', () => onSignal('SIGTERM'))
    process.on('SIGINT', () => onSignal('SIGINT'))
  })
}

export const serveCommand = defineCommand({
  meta: { name: 'serve', description: 'Run the flagd daemon' },
  args: {
    ...configArgs,
    host: { type: 'string', description: 'Address to listen on (default 127.0.0.1)' },
    port: { type: 'string', description: 'Port to listen on (default 8080)' },
  },
  async run({ args }) {
    const config = await configFromArgs(args)
    const app = await createApp(config)
    try {
      await bootstrapAdmin(app, process.env, log)
    } catch (err) {
      await app.close()
      throw err
    }
    const listener = listen(app)
    await app.watcher.start()
    const { hostname, port } = listener.server
    log(`${VERSION} listening on http://${hostname}:${port} (data ${config.dataDir}, environment ${config.environment})`)
    await untilStopped(listener, app)
  },
})
