/**
 * The daemon's lifecycle, in one place: check the address, open the app, create the first admin
 * from the environment when there are no users, listen, serve the control socket, start the drop
 * folder, and on SIGTERM or SIGINT stop gracefully (event streams closed, in-flight requests
 * finished within the grace period, the store written and closed, the logs flushed).
 */

import { rmSync } from 'node:fs'
import { basename, dirname, isAbsolute, join, relative } from 'node:path'
import type { Server } from 'bun'
import { type App, createApp } from './app.ts'
import type { Config } from './config.ts'
import { controlSocketPath, serveControlSocket } from './control/control-socket.ts'
import { redactedUrl } from './domain/redacted-url.ts'
import { checkListenHost, type Listener, listen } from './http/listener.ts'
import { createAdminService } from './services/admin-service.ts'
import { bootstrapAdmin } from './services/first-admin.ts'
import { VERSION } from './version.ts'

const SHUTDOWN_GRACE_MS = 10_000

/**
 * Holds a SIGTERM or SIGINT that arrives while the daemon starts: `/health` answers as soon as the
 * listener is up, so a supervisor may stop the daemon before the drop folder and the sync port are
 * started; the stop then runs, gracefully, the moment start-up is done, instead of the signal
 * killing the process.
 */
function holdEarlySignals(): { take(): string | undefined } {
  let held: string | undefined
  const hold = (signal: string) => () => {
    held ??= signal
  }
  const onTerm = hold('SIGTERM')
  const onInt = hold('SIGINT')
  process.on('SIGTERM', onTerm)
  process.on('SIGINT', onInt)
  return {
    take() {
      process.off('SIGTERM', onTerm)
      process.off('SIGINT', onInt)
      return held
    },
  }
}

/** Resolves once a signal stopped the server gracefully and the store is closed (`early`: one that came during start-up). */
function untilStopped(listener: Listener, control: Server<undefined> | undefined, app: App, early?: string): Promise<void> {
  const log = (line: string) => app.logger.info(line)
  return new Promise((resolve) => {
    let stoppingSince: number | undefined
    const onSignal = (signal: string) => {
      // Ctrl-C under `bun run` arrives twice within milliseconds (from the terminal and forwarded
      // by bun): only a second signal more than a second after the first means "exit now".
      if (stoppingSince !== undefined && performance.now() - stoppingSince < 1000) return
      if (stoppingSince !== undefined) {
        log(`${signal} again: exiting now`)
        void app.flushLogs().finally(() => process.exit(1))
        return
      }
      stoppingSince = performance.now()
      log(`${signal}: finishing in-flight requests, then exiting`)
      // event streams never end on their own: close them first, so they do not hold up the stop
      app.http.closeStreams()
      void listener
        .stop(SHUTDOWN_GRACE_MS)
        .then(async () => {
          await control?.stop(true)
          rmSync(controlSocketPath(app.config.dataDir), { force: true })
          await app.close()
        })
        .then(async () => {
          log('stopped')
          await app.flushLogs()
          resolve()
        })
    }
    process.on('SIGTERM', () => onSignal('SIGTERM'))
    process.on('SIGINT', () => onSignal('SIGINT'))
    if (early !== undefined) onSignal(early)
  })
}

/**
 * How to run flagd's CLI from where this daemon was started, for hints: the compiled binary by its
 * name when that is on PATH (else its path), or, from a clone, the source entry through Bun.
 */
export function cliCommand(argv = process.argv, execPath = process.execPath, cwd = process.cwd(), which = Bun.which): string {
  const script = argv[1]
  // a compiled binary runs its entry from Bun's embedded file system
  if (script === undefined || script.startsWith('/$bunfs/') || !/\.[cm]?[jt]s$/.test(script)) {
    const name = basename(execPath)
    return which(name) === execPath ? name : execPath
  }
  // the checkout's own `bin/flagd` on PATH runs this very entry: its name is the command
  const wrapper = which('flagd')
  if (wrapper !== null && wrapper === join(dirname(dirname(script)), 'bin', 'flagd')) return 'flagd'
  const entry = relative(cwd, script)
  const shown = entry.startsWith('..') || isAbsolute(entry) ? script : entry
  // a bun found only in the project's node_modules/.bin (how `npx bun run start` runs) is not on the user's PATH
  const bun = which('bun')
  return `${bun && !bun.includes('/node_modules/') ? 'bun' : 'npx bun'} ${shown}`
}

/** Runs the daemon for `config` until a signal stops it (see module comment). */
export async function runDaemon(config: Config): Promise<void> {
  await checkListenHost(config.host, config.port)
  const app = await createApp(config)
  const log = (line: string) => app.logger.info(line)
  try {
    await bootstrapAdmin(app.services, config.dataDir, process.env, log, cliCommand())
  } catch (err) {
    await app.close()
    throw err
  }
  const listener = listen(config, app.http)
  const early = holdEarlySignals()
  let control: Server<undefined> | undefined
  try {
    control = serveControlSocket(config.dataDir, createAdminService(app.services), log)
  } catch (err) {
    log(`warning: no control socket (${(err as Error).message}); admin commands will need the daemon stopped`)
  }
  await app.watcher.start()
  let sync: Awaited<ReturnType<App['sync']['start']>>
  try {
    sync = await app.sync.start()
  } catch (err) {
    early.take()
    await listener.stop(0)
    await control?.stop(true)
    await app.close()
    throw err
  }
  // the daemon is up and writes JSON lines (when not on a terminal): so does whatever else prints from
  // now on; start-up failures before this point stay `error: …` sentences on stderr (docs/operations.md)
  app.captureConsole()
  const { hostname, port } = listener.server
  const storage = config.storage.backend === 'postgres' ? `, storage ${redactedUrl(config.storage.postgresUrl as string)}` : ''
  log(`${VERSION} listening on http://${hostname}:${port} (data ${config.dataDir}${storage}, environment ${config.environment})`)
  if (sync) {
    const where = [sync.port === undefined ? '' : `${config.sync.host}:${sync.port}`, config.sync.socket ?? '']
      .filter(Boolean)
      .join(' and ')
    log(`flagd sync protocol (in-process providers) on ${where}${config.sync.anonymous ? ', anonymous callers allowed' : ''}`)
  }
  await untilStopped(listener, control, app, early.take())
}
