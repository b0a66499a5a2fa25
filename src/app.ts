/**
 * The composition root: opens the store and wires services, HTTP, logs, metrics, housekeeping and the
 * watcher. It only composes: running the daemon is `daemon.ts`'s, and how admin commands reach the
 * services is `admin-access.ts`'s.
 */

import { join } from 'node:path'
import { type Config, ConfigError } from './config.ts'
import { redirectUriFor } from './config-oidc.ts'
import type { Clock } from './domain/clock.ts'
import { newId } from './domain/new-id.ts'
import { systemPrincipal } from './domain/principal.ts'
import { createStreamHub } from './http/event-stream.ts'
import { createHttpApp, type HttpApp } from './http/server.ts'
import { createSessionTokenCodec } from './http/session-token-codec.ts'
import { createStreamCredentials } from './http/stream-credentials.ts'
import { createLogging, type Logger, type Logging, unbufferedLogging } from './observability/logger.ts'
import { createMetrics, type Metrics } from './observability/metrics.ts'
import { startChangeSchedule } from './services/change-schedule.ts'
import { startHousekeeping } from './services/housekeeping.ts'
import { createOidcService } from './services/oidc-service.ts'
import { publicExportExposure } from './services/public-export-exposure.ts'
import { createServices, type ServiceOptions, type Services } from './services/services.ts'
import type { Telemetry } from './services/telemetry.ts'
import { createWebhookDispatcher, type WebhookDispatcher, type WebhookTelemetry } from './services/webhook-dispatcher.ts'
import type { DiskFaults } from './storage/change-journal.ts'
import { openStorage } from './storage/open-storage.ts'
import type { Store } from './storage/store.ts'
import type { EvaluationRpcServer } from './sync/evaluation-server.ts'
import type { SyncServer } from './sync/sync-server.ts'
import { systemClock } from './system-clock.ts'
import { createImportWatcher, type ImportWatcher } from './watcher/import-watcher.ts'

/** A wired application over an open data directory. */
export interface App {
  config: Config
  store: Store
  services: Services
  http: HttpApp
  /** The drop-folder watcher; `serve` starts it. */
  watcher: ImportWatcher
  /** flagd's sync protocol for in-process providers (config `sync`); `serve` starts it. */
  sync: { start(): Promise<SyncServer | undefined> }
  logger: Logger
  /** Writes out buffered log lines (the last thing `serve` does). */
  flushLogs(): Promise<void>
  /** Turns what others print with `console` into log lines while logs are JSON (`serve` calls it); answers the undo. */
  captureConsole(): () => void
  /** Stops timers, writes pending in-memory changes and releases the data-directory lock. */
  close(): Promise<void>
}

/** Options for tests: fault injection and cheaper hashing. */
export interface AppOptions
  extends Omit<
    ServiceOptions,
    'telemetry' | 'usageLog' | 'guardLog' | 'guardLogger' | 'onGuardFlushError' | 'onUsageFlushError' | 'onCounted' | 'now'
  > {
  /** The one clock of the process (docs/development.md#time); the system's when absent. */
  now?: Clock
  /** Called before every write to the data directory; tests throw from it to simulate a full disk. */
  faults?: DiskFaults
  logger?: Logger
  /** Tests shorten the webhook retry schedule. */
  webhookRetryDelaysMs?: readonly number[]
}

/** Opens the data directory and wires everything. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const logging: Logging = options.logger ? unbufferedLogging(options.logger) : createLogging({ level: config.logLevel })
  const logger = logging.logger
  const now = options.now ?? systemClock
  // read at scrape time, when the store exists
  const metrics = createMetrics(() => store.committed().flags.size, config.metrics.perFlag)
  const storage = await openStorage(config, {
    now,
    onWrite: metrics.commit,
    log: (line) => logger.warn(line),
    info: (line) => logger.info(line),
    onFailure: (err) => logger.error({ err }, 'writing a change failed; the service is read-only until restarted'),
    ...(options.faults ? { faults: options.faults } : {}),
  })
  const store = storage.store
  try {
    const secret = await storage.secret()
    const telemetry = telemetryFor(logger, metrics)
    const services = createServices(store, config, {
      ...options,
      now,
      telemetry,
      failureLedger: storage.failureLedger,
      usageLog: storage.usage,
      guardLog: storage.guard,
      guardLogger: logger,
      onGuardFlushError: (err) => logger.warn({ err }, 'writing the metrics guards read failed; they are kept for the next write'),
      onUsageFlushError: (err) => logger.warn({ err }, 'writing flag usage counts failed; they are kept for the next write'),
      ...(config.metrics.perFlag ? { onCounted: (rows: Parameters<typeof metrics.evaluations>[0]) => metrics.evaluations(rows) } : {}),
    })
    // the default environment (config environment) exists before anything is served; on a data
    // directory from before environments the storage upgrade gave it every flag's state already
    const moved = await services.environments.ensureDefault({ principal: systemPrincipal('bootstrap'), requestId: newId('bootstrap') })
    // a changed config moves every request and token that names no environment: say so
    if (moved !== undefined)
      logger.warn(
        `the default environment is now ${config.environment} (config environment); it was ${moved.previous}` +
          (moved.made ? `, and ${config.environment} was made as its copy (its flags' states and its protection)` : '') +
          `. Requests, tokens and commands that name no environment act in ${config.environment} from now on (docs/environments.md#the-default-environment)`,
      )
    const dropInto = config.import.environment
    if (dropInto !== undefined && !services.environments.has(dropInto))
      throw new ConfigError(
        `import.environment names ${JSON.stringify(dropInto)}, which is no environment (make it with flagd env add ${dropInto}, or change the key)`,
      )
    const exposure = publicExportExposure(store.committed(), { publicExport: config.publicExport, singleSignOn: !!config.auth.oidc })
    if (exposure) logger.warn(exposure)
    if (config.metrics.perFlag) metrics.countPendingEvaluations(() => services.usage.pendingCounts())
    metrics.measureCache(() => services.cache.size().bytes)
    const sessionTokens = createSessionTokenCodec(secret, services.cache, () => now().getTime())
    // single sign-on (docs/single-sign-on.md): its provider is looked up in the background, never waited for
    const oidcSettings = config.auth.oidc
    const oidc =
      oidcSettings &&
      createOidcService({
        config: oidcSettings,
        store,
        auth: services.auth,
        secret,
        redirect: redirectUriFor(oidcSettings, config.host, config.port),
        now,
      })
    // flagd's evaluation service (docs/openfeature.md#rpc), when its port is on: its Connect calls are
    // routes of the HTTP app, its gRPC calls the evaluation port's (loaded only then: protobufjs and gRPC)
    const evaluationOn = config.evaluation.port !== undefined || config.evaluation.socket !== undefined
    const evaluationRpc = evaluationOn
      ? (await import('./sync/evaluation-rpc.ts')).createEvaluationRpc({
          evaluations: services.evaluations,
          sync: services.sync,
          changeFeed: services.changeFeed,
          defaultEnvironment: config.environment,
        })
      : undefined
    const http = createHttpApp({
      config,
      now,
      ...services,
      ...(evaluationRpc ? { evaluationRpc } : {}),
      ...(oidc ? { oidc } : {}),
      logOidc: (reason) => logger.warn({ reason }, 'a single sign-on failed'),
      sessionTokens,
      streams: createStreamHub(config.streams.heartbeatSeconds * 1000),
      streamCredentials: createStreamCredentials(secret, services),
      ...(config.metrics.enabled ? { metrics } : {}),
      logError: (requestId, err) => logger.error({ requestId, err }, 'request failed with an internal error'),
      onRequest(event) {
        metrics.request(event, event.seconds)
        logging.access(event)
      },
    })
    // once-only work runs on one replica at a time (always here, with the file store); a replica
    // that takes over starts a fresh dispatcher from the shared cursors
    const newDispatcher = () =>
      createWebhookDispatcher(store, {
        now,
        cursors: storage.webhookCursors,
        environment: config.environment,
        webhooks: config.webhooks,
        telemetry: webhookTelemetry(logger, metrics),
        ...(options.webhookRetryDelaysMs ? { retryDelaysMs: options.webhookRetryDelaysMs } : {}),
      })
    let webhooks: WebhookDispatcher | undefined
    const leadership = storage.leadership()
    const stopFollowing = leadership.onChange((leading) => {
      if (leading && !webhooks) (webhooks = newDispatcher()).start()
      if (!leading && webhooks) {
        const stopping = webhooks
        webhooks = undefined
        void stopping.stop()
      }
    })
    const stopHousekeeping = startHousekeeping({
      now,
      auth: services.auth,
      store,
      leadership,
      auditRetentionDays: config.audit.retentionDays,
      log: logger,
    })
    const stopSchedule = startChangeSchedule({ changeRequests: services.changeRequests, log: logger })
    // guarded rollouts are checked every 10 s besides after each report (docs/guarded-rollouts.md#when-checks-run)
    services.guards.start()
    const watcher = createImportWatcher(services.migrations, {
      watchDir: config.import.watchDir ?? join(config.dataDir, 'import'),
      settleMs: config.import.settleMs,
      rescanMs: config.import.rescanMs,
      mode: config.import.mode,
      values: config.import.values,
      ...(config.import.environment !== undefined ? { environment: config.import.environment } : {}),
      maxBytes: config.limits.importBytes,
      now,
      log: (line) => logger.info(line),
      warn: (line) => logger.warn(line),
      telemetry,
    })
    let syncServer: SyncServer | undefined
    let evaluationServer: EvaluationRpcServer | undefined
    const sync = {
      async start() {
        if (evaluationRpc !== undefined) {
          // flagd's evaluation service for providers in RPC mode (docs/openfeature.md#rpc)
          const { startEvaluationServer } = await import('./sync/evaluation-server.ts')
          evaluationServer = await startEvaluationServer(
            evaluationRpc,
            config.evaluation,
            (request) => http.handle(request),
            (err) => logger.error({ err }, 'an RPC call failed with an internal error'),
          )
          logger.info({ port: evaluationServer.port, socket: config.evaluation.socket }, "flagd's evaluation service (RPC) listening")
        }
        if (config.sync.port === undefined && config.sync.socket === undefined) return undefined
        // gRPC and protobufjs are loaded only when the sync protocol is served: loading them costs
        // resident memory every daemon would carry (docs/performance.md#what-start-up-does-not-load)
        const { startSyncServer } = await import('./sync/sync-server.ts')
        syncServer = await startSyncServer(
          config.sync,
          services.sync,
          {
            opened: (caller, peer) => logger.info({ caller, peer }, 'sync stream opened'),
            closed: (caller, peer, why) => logger.info({ caller, peer, why }, 'sync stream closed'),
            fannedOut: (seconds) => metrics.syncFanOut(seconds),
            oversized: (caller, bytes) =>
              logger.warn(
                { caller, bytes },
                `sync: the flag document sent to ${caller} is ${(bytes / 2 ** 20).toFixed(1)} MiB, over the 4 MiB gRPC clients accept by default: providers that keep that limit fail with RESOURCE_EXHAUSTED and stop following changes; raise the client's maximum received message size where the provider allows it, or give the token narrower flagPrefixes`,
              ),
          },
          { cache: services.cache },
        )
        if (syncServer) metrics.countSyncStreams(() => syncServer?.streamCount() ?? 0)
        return syncServer
      },
    }
    return {
      config,
      store,
      services,
      http,
      watcher,
      sync,
      logger,
      flushLogs: () => logging.flush(),
      captureConsole: () => logging.captureConsole(),
      async close() {
        stopHousekeeping()
        stopSchedule()
        await syncServer?.close()
        await evaluationServer?.close()
        http.closeStreams()
        services.changeFeed.close()
        stopFollowing()
        await leadership.stop()
        await webhooks?.stop()
        await watcher.stop()
        await services.usage.stop()
        await services.guards.stop()
        await services.guardMetrics.stop()
        storage.usage.close()
        storage.guard.close()
        await store.flush().catch(() => {})
        await store.close()
      },
    }
  } catch (err) {
    await store.close()
    throw err
  }
}

/** Webhook deliveries in the log (a line per attempt) and the metrics. */
function webhookTelemetry(logger: Logger, metrics: Metrics): WebhookTelemetry {
  return {
    delivered(webhook, id, status, attempt) {
      metrics.webhookDelivery(webhook, 'delivered')
      logger.info({ webhook, delivery: id, status, attempt }, 'webhook delivered')
    },
    failedAttempt(webhook, id, why, attempt, retryInMs) {
      metrics.webhookDelivery(webhook, 'retried')
      logger.warn({ webhook, delivery: id, attempt, retryInSeconds: retryInMs / 1000 }, `webhook delivery failed: ${why}; retrying`)
    },
    gaveUp(webhook, id, why) {
      metrics.webhookDelivery(webhook, 'failed')
      logger.error({ webhook, delivery: id }, `webhook delivery given up after its last retry: ${why}`)
    },
  }
}

/** Connects service events to the log and the metrics. */
function telemetryFor(logger: Logger, metrics: Metrics): Telemetry {
  return {
    loginFailed: () => metrics.loginFailed(),
    importFinished(event) {
      metrics.importFinished(event.source, event.outcome)
      const fields = {
        source: event.source,
        origin: event.origin,
        outcome: event.outcome,
        summary: event.summary,
        backup: event.backup,
        error: event.error,
      }
      if (event.outcome === 'failed' || event.outcome === 'invalid') logger.warn(fields, 'import refused')
      else logger.info(fields, 'import')
    },
  }
}
