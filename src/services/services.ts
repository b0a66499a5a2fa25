/**
 * createServices(): the one set of use cases over a store, shared by the HTTP API, the CLI and the
 * watcher, so every entry point applies the same rules.
 */

import type { Config } from '../config.ts'
import type { Clock } from '../domain/clock.ts'
import type { KindLifetimes } from '../domain/flag-lifecycle.ts'
import { RequestCache } from '../domain/request-cache.ts'
import { fileGuardLog } from '../storage/file-guard-log.ts'
import type { FailureLedger, GuardLog, UsageLog } from '../storage/shared-tables.ts'
import type { Store } from '../storage/store.ts'
import { type ApiTokenService, createApiTokenService } from './api-token-service.ts'
import { type AuditService, createAuditService } from './audit-service.ts'
import { type AuthService, createAuthService } from './auth-service.ts'
import { type BackupService, createBackupService } from './backup-service.ts'
import { cachedFlagEvaluator } from './cached-flag-evaluator.ts'
import { type ChangeRequestService, createChangeRequestService } from './change-request-service.ts'
import { createEnvironmentService, type EnvironmentService } from './environment-service.ts'
import { createEvaluationService, type EvaluationService } from './evaluation-service.ts'
import { createFlagChangeFeed, type FlagChangeFeed } from './flag-change-feed.ts'
import { createFlagEvaluator } from './flag-evaluator.ts'
import { cachedFlagReadModel, createFlagReadModel } from './flag-read-model.ts'
import { createFlagService, type FlagService } from './flag-service.ts'
import { createFlagSyncService, type FlagSyncService } from './flag-sync-service.ts'
import { createGuardImpact, type GuardImpact } from './guard-impact.ts'
import { createGuardMetrics, type GuardMetrics } from './guard-metrics.ts'
import { createGuardWatcher, type GuardWatcher } from './guard-watcher.ts'
import { createHealthService, type HealthService } from './health-service.ts'
import { createInProcessUsage, type InProcessUsage } from './in-process-usage.ts'
import { createLoginThrottle } from './login-throttle.ts'
import { createMigrationService, type MigrationService } from './migration-service.ts'
import { createPasswordHasher, type HashCost } from './password-hasher.ts'
import { createPatternGate } from './pattern-gate.ts'
import { haltRollout } from './rollout-halt.ts'
import { createSegmentService, type SegmentService } from './segment-service.ts'
import { createServedSnapshots } from './served-snapshot.ts'
import { createSessionService, type SessionService } from './session-service.ts'
import { createSyncAudience } from './sync-audience.ts'
import type { Telemetry } from './telemetry.ts'
import { UsageCounter } from './usage-counter.ts'
import { createUsageService, type UsageService } from './usage-service.ts'
import { createUserService, type UserService } from './user-service.ts'

/** Every service. */
export interface Services {
  /** What one request made for the next: lists, bulk evaluations, credentials, sync documents (one budget). */
  cache: RequestCache
  users: UserService
  flags: FlagService
  segments: SegmentService
  environments: EnvironmentService
  changeRequests: ChangeRequestService
  /** Usage reported over OTLP by applications that evaluate in-process. */
  inProcessUsage: InProcessUsage
  /** The application metrics guards read (docs/guarded-rollouts.md#the-applications-metrics); `stop()` it before closing the store. */
  guardMetrics: GuardMetrics
  /** `GET /api/flags/{name}/impact`. */
  impact: GuardImpact
  /** The watcher of guarded rollouts; `start()` its timer, `stop()` it before the metrics. */
  guards: GuardWatcher
  migrations: MigrationService
  auth: AuthService
  sessions: SessionService
  apiTokens: ApiTokenService
  evaluations: EvaluationService
  audit: AuditService
  /** Committed flag changes, for the event streams; `close()` it with the store. */
  changeFeed: FlagChangeFeed
  /** What in-process providers receive over flagd's sync protocol. */
  sync: FlagSyncService
  /** Flag usage; `stop()` it before closing the store (it writes what is counted). */
  usage: UsageService
  health: HealthService
  /** A consistent copy of everything stored (`flagd backup`). */
  backup: BackupService
}

/** Options that tests tune (a cheaper hash keeps suites fast; production uses the default). */
export interface ServiceOptions {
  /** The request cache (the app makes it, since the HTTP layer's session tokens use it too). */
  cache?: RequestCache
  hashCost?: HashCost
  now: Clock
  telemetry?: Telemetry
  /** Failed logins shared by replicas (PostgreSQL storage). */
  failureLedger?: FailureLedger | undefined
  /** Where flag usage counts are kept. */
  usageLog: UsageLog
  /** Where the metrics guards read are kept (the data directory's `guard.sqlite` when absent). */
  guardLog?: GuardLog
  /** A failed write of guard metrics (kept and written with the next). */
  onGuardFlushError?: (err: unknown) => void
  /** Where a guard's trip is said (`warn`), and a check that failed. */
  guardLogger?: { warn(fields: object, msg: string): void }
  /** A failed write of usage counts (kept and written with the next). */
  onUsageFlushError?: (err: unknown) => void
  /** Each minute's evaluation counts by flag name (Prometheus, with `metrics.perFlag`). */
  onCounted?: (rows: { flag: string; variant: string; reason: string; count: number }[]) => void
}

/** Each kind's expected lifetime as configured (`lifecycle.<kind>Days`, docs/configuration.md). */
export function kindLifetimes(config: Config): KindLifetimes {
  const c = config.lifecycle
  return {
    release: c.releaseDays,
    experiment: c.experimentDays,
    operational: c.operationalDays,
    'kill-switch': c['kill-switchDays'] !== undefined ? c['kill-switchDays'] : c.killSwitchDays,
    permission: c.permissionDays,
  }
}

/** Wires the services over `store`. */
export function createServices(store: Store, config: Config, options: ServiceOptions): Services {
  // everything kept from one request for the next, under one budget (docs/architecture.md#caching)
  const cache = options.cache ?? new RequestCache(config.limits.cacheBytes)
  const hasher = createPasswordHasher(options.hashCost)
  const now = options.now
  const userWindowMs = config.auth.loginUserWindowSeconds * 1000
  const throttle = createLoginThrottle(
    {
      perUserAddress: { maxFailures: config.auth.loginMaxFailuresPerUser, windowMs: userWindowMs },
      perAddress: { maxFailures: config.auth.loginMaxFailuresPerAddress, windowMs: config.auth.loginAddressWindowSeconds * 1000 },
      perUser: { maxFailures: config.auth.loginMaxFailuresPerUserTotal, windowMs: userWindowMs },
    },
    options.failureLedger,
  )
  // one gate for every write that may check patterns: flag writes, rollbacks and imports take turns
  const patternGate = createPatternGate()
  // the environment a request naming none acts in (docs/environments.md#the-default-environment)
  const environment = config.environment
  const lifetimes = kindLifetimes(config)
  const read = cachedFlagReadModel(createFlagReadModel(store, environment, now, { lifetimes }), cache)
  const flags = createFlagService(store, config.limits.maxFlags, now, environment, patternGate, read)
  const apiTokens = createApiTokenService(store, now, cache, environment)
  const changeFeed = createFlagChangeFeed(store)
  const clockMs = () => now().getTime()
  const counter = new UsageCounter(clockMs, environment)
  const audience = createSyncAudience(clockMs)
  // what each environment serves at the committed revision, built once (docs/architecture.md#snapshots)
  const snapshots = createServedSnapshots()
  const evaluator = cachedFlagEvaluator(createFlagEvaluator(snapshots, clockMs), cache)
  const guardMetrics = createGuardMetrics({
    store,
    log: options.guardLog ?? fileGuardLog(config.dataDir),
    now: clockMs,
    ...(options.onGuardFlushError ? { onFlushError: options.onGuardFlushError } : {}),
  })
  const guardLogger = options.guardLogger
  const guards = createGuardWatcher({
    store,
    metrics: guardMetrics,
    now,
    environment,
    halt: (request) => haltRollout({ store, now, ...(guardLogger ? { logger: guardLogger } : {}) }, request),
    onError: (err) => guardLogger?.warn({ err }, 'checking a rollout guard failed; the next report or round checks it again'),
  })
  return {
    cache,
    users: createUserService(store, hasher, now, (username) => throttle.clear(username)),
    flags,
    segments: createSegmentService(store, now, environment),
    environments: createEnvironmentService(store, config.environment, now),
    changeRequests: createChangeRequestService(store, now),
    inProcessUsage: createInProcessUsage(store, config.usage.count ? counter : undefined, environment, snapshots),
    guardMetrics,
    impact: createGuardImpact(store, guardMetrics, environment, clockMs),
    guards,
    migrations: createMigrationService({
      store,
      now,
      environment: config.environment,
      publicExport: config.publicExport,
      maxFlags: config.limits.maxFlags,
      patternGate,
      snapshots,
      telemetry: options.telemetry,
      remote: { allowedHosts: config.import.allowedHosts, timeoutMs: config.import.urlTimeoutMs, maxBytes: config.import.urlMaxBytes },
    }),
    auth: createAuthService(store, hasher, throttle, { tokenTtlSeconds: config.auth.tokenTtl, now, telemetry: options.telemetry }),
    sessions: createSessionService(store, now),
    apiTokens,
    evaluations: createEvaluationService(store, evaluator, config.usage.count ? counter : undefined, clockMs, environment),
    audit: createAuditService(store, flags, environment),
    changeFeed,
    sync: createFlagSyncService({ store, apiTokens, changeFeed, environment: config.environment, audience, cache, snapshots }),
    usage: createUsageService({
      store,
      log: options.usageLog,
      counter,
      environment,
      staleDays: config.usage.staleDays,
      lifetimes,
      lastHeldAt: audience.lastHeldAt,
      heldNow: audience.heldNow,
      now: clockMs,
      ...(options.onUsageFlushError ? { onFlushError: options.onUsageFlushError } : {}),
      ...(options.onCounted ? { onCounted: options.onCounted } : {}),
    }),
    health: createHealthService(store),
    backup: createBackupService(store),
  }
}
