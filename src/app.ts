/**
 * The composition root: opens the store, wires services and HTTP, and (for `serve`) starts
 * Bun.serve with the contract's limits and a graceful stop.
 */

import type { Server } from 'bun'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { connectControlSocket, controlSocketPath } from './control/control-socket.ts'
import { createAdminService, type AdminApi } from './services/admin-service.ts'
import { DirectoryInUseError } from './storage/file-lock.ts'
import { createLogging, type Logger, type Logging } from './observability/logger.ts'
import { createMetrics, type Metrics } from './observability/metrics.ts'
import type { Telemetry } from './services/telemetry.ts'
import { createImportWatcher, type ImportWatcher } from './watcher/import-watcher.ts'
import type { Config } from './config.ts'
import { PERMISSIONS } from './domain/permission.ts'
import { errorResponse } from './http/error-handler.ts'
import { createHttpApp, type HttpApp } from './http/server.ts'
import { createTokenService } from './http/token-service.ts'
import { AppError } from './domain/errors.ts'
import { createServices, type ServiceOptions, type Services } from './services/services.ts'
import { openJsonFileStore, type Store } from './storage/json-file-store.ts'
import type { FileWriter } from './storage/durable-json-adapter.ts'
import { loadOrCreateSecret } from './storage/secret-file.ts'

/** A wired application over an open data directory. */
export interface App {
  config: Config
  store: Store
  services: Services
  http: HttpApp
  /** The drop-folder watcher; `serve` starts it. */
  watcher: ImportWatcher
  logger: Logger
  /** Writes out buffered log lines (the last thing `serve` does). */
  flushLogs(): Promise<void>
  /** Stops timers, writes pending in-memory changes and releases the data-directory lock. */
  close(): Promise<void>
}

/** Options for tests: fault injection and cheaper hashing. */
export interface AppOptions extends Omit<ServiceOptions, 'telemetry'> {
  writer?: FileWriter
  logger?: Logger
}

/** Opens the data directory and wires everything. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const logging: Logging = options.logger
    ? { logger: options.logger, access: (e) => options.logger?.info(e, 'request'), flush: async () => {} }
    : createLogging({ level: config.logLevel })
  const logger = logging.logger
  // read at scrape time, when the store exists
  const metrics = createMetrics(() => Object.keys(store.state.flags).length)
  const store = await openJsonFileStore({
    dataDir: config.dataDir,
    onCommit: metrics.commit,
    onFailure: (err) => logger.error({ err }, 'writing the state file failed; the service is read-only until restarted'),
    ...(options.writer ? { writer: options.writer } : {}),
  })
  try {
    const secret = config.auth.secret ?? (await loadOrCreateSecret(config.dataDir))
    const services = createServices(store, config, { ...options, telemetry: telemetryFor(logger, metrics) })
    const tokens = createTokenService(secret)
    const http = createHttpApp({
      config,
      ...services,
      tokens,
      ...(config.metrics.enabled ? { metrics } : {}),
      logError: (requestId, err) => logger.error({ requestId, err }, 'request failed with an internal error'),
      onRequest(event) {
        metrics.request(event, event.seconds)
        logging.access({ method: event.method, path: event.path, status: event.status, durationMs: Math.round(event.seconds * 10000) / 10, requestId: event.requestId, userId: event.userId })
      },
    })
    services.auth.pruneExpired()
    const pruner = setInterval(() => services.auth.pruneExpired(), 60_000)
    pruner.unref()
    const watcher = createImportWatcher(services.migrations, {
      watchDir: config.import.watchDir ?? join(config.dataDir, 'import'),
      settleMs: config.import.settleMs,
      rescanMs: config.import.rescanMs,
      mode: config.import.mode,
      values: config.import.values,
      maxBytes: config.limits.importBytes,
      log: (line) => logger.info(line),
    })
    return {
      config,
      store,
      services,
      http,
      watcher,
      logger,
      flushLogs: () => logging.flush(),
      async close() {
        clearInterval(pruner)
        await watcher.stop()
        await store.flush().catch(() => {})
        await store.close()
      },
    }
  } catch (err) {
    await store.close()
    throw err
  }
}

/** Connects service events to the log and the metrics. */
function telemetryFor(logger: Logger, metrics: Metrics): Telemetry {
  return {
    loginFailed: () => metrics.loginFailed(),
    importFinished(event) {
      metrics.importFinished(event.source, event.outcome)
      const fields = { source: event.source, outcome: event.outcome, summary: event.summary, backup: event.backup, error: event.error }
      if (event.outcome === 'failed' || event.outcome === 'invalid') logger.warn(fields, 'import refused')
      else logger.info(fields, 'import')
    },
  }
}

/** The services over an open data directory, without HTTP: what CLI commands use. */
export async function openServices(config: Config): Promise<{ services: Services; close(): Promise<void> }> {
  const store = await openJsonFileStore({ dataDir: config.dataDir })
  return { services: createServices(store, config), close: () => store.close() }
}

/**
 * The administrator's API for a CLI command: in-process when the data directory is free, or through
 * the running daemon's control socket when a daemon holds it (same service code either way).
 */
export async function openAdmin(config: Config): Promise<{ admin: AdminApi; close(): Promise<void>; viaDaemon: boolean }> {
  try {
    const { services, close } = await openServices(config)
    return { admin: createAdminService(services), close, viaDaemon: false }
  } catch (err) {
    if (err instanceof DirectoryInUseError && existsSync(controlSocketPath(config.dataDir))) {
      return { admin: connectControlSocket(config.dataDir), close: async () => {}, viaDaemon: true }
    }
    throw err
  }
}

/** Creates the first admin from FLAGD_ADMIN_USERNAME / FLAGD_ADMIN_PASSWORD when there is no user. */
export async function bootstrapAdmin(app: App, env: Record<string, string | undefined>, log: (line: string) => void): Promise<void> {
  if (app.services.users.count() > 0) return
  const username = env.FLAGD_ADMIN_USERNAME
  const password = env.FLAGD_ADMIN_PASSWORD
  if (username && password) {
    await app.services.users.create({ username, password, permissions: [...PERMISSIONS] })
    log(`created the first user "${username}" with every permission (from FLAGD_ADMIN_USERNAME and FLAGD_ADMIN_PASSWORD)`)
    return
  }
  if (username || password) throw new Error('set both FLAGD_ADMIN_USERNAME and FLAGD_ADMIN_PASSWORD to create the first user, or neither')
  log(
    'no users yet. Create the first admin with:\n' +
      `  flagd user add admin --data-dir ${app.config.dataDir}   (prompts for the password)\n` +
      'or start with FLAGD_ADMIN_USERNAME and FLAGD_ADMIN_PASSWORD set.',
  )
}

/** A listening server and the number of requests it is answering right now. */
export interface Listener {
  server: Server<undefined>
  inFlight(): number
  /** Stops accepting, waits for in-flight requests (at most `graceMs`), then closes idle connections. */
  stop(graceMs: number): Promise<void>
}

/** Starts listening; bodies above twice the largest limit are cut by Bun itself. */
export function listen(app: App): Listener {
  const { config } = app
  let inFlight = 0
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    development: false,
    maxRequestBodySize: Math.max(config.limits.bodyBytes, config.limits.importBytes) * 2,
    async fetch(request, srv) {
      inFlight++
      try {
        return await app.http.handle(request, srv.requestIP(request)?.address ?? 'unknown')
      } finally {
        inFlight--
      }
    },
    error: () => errorResponse(new AppError('INTERNAL', 'internal error')),
  })
  return {
    server,
    inFlight: () => inFlight,
    async stop(graceMs) {
      const stopped = server.stop(false) // stop accepting; keep-alive sockets may linger
      const deadline = Date.now() + graceMs
      while (inFlight > 0 && Date.now() < deadline) await Bun.sleep(10)
      await server.stop(true)
      await stopped
    },
  }
}
