/**
 * Prometheus metrics (GET /metrics): requests and their duration by route and
 * status, flag count, imports by source and outcome, store commit duration and batch size, failed
 * logins, webhook deliveries, open sync streams. Routes are labelled by template as the OpenAPI document writes them
 * (`/api/flags/{flagName}`, `/api/users/{userId}`), never by concrete path, so label cardinality
 * stays bounded.
 */

import { createMetricRegistry, PROMETHEUS_TEXT } from './metric-registry.ts'
import { createRequestMetrics } from './request-metrics.ts'

/** The metrics of one daemon. */
export interface Metrics {
  readonly contentType: string
  render(): Promise<string>
  request(labels: { method: string; route: string; status: number }, seconds: number): void
  commit(seconds: number, batchSize: number): void
  /** An import's source and outcome, as the services name them (labels; observability knows no services). */
  importFinished(source: string, outcome: string): void
  loginFailed(): void
  /** One webhook delivery attempt's outcome: `delivered`, `retried` (failed, will retry) or `failed` (given up). */
  webhookDelivery(webhook: string, outcome: 'delivered' | 'retried' | 'failed'): void
  /** Where the request cache's size in bytes is read (docs/architecture.md#caching). */
  measureCache(read: () => number): void
  /** Where the number of open sync streams is read (0 until the sync protocol is served). */
  countSyncStreams(read: () => number): void
  /** A change written to every open sync stream, and how long that took. */
  syncFanOut(seconds: number): void
  /** Evaluations counted per flag, variant and reason (only with `metrics.perFlag`; a no-op otherwise). */
  evaluations(rows: readonly EvaluationCount[]): void
  /** Where a scrape reads the evaluations counted but not yet handed to `evaluations`. */
  countPendingEvaluations(read: () => readonly EvaluationCount[]): void
}

/** Evaluations of one flag, variant and reason. */
export interface EvaluationCount {
  flag: string
  variant: string
  reason: string
  count: number
}

/** Creates the metrics; `flagCount` is read at scrape time. */
export function createMetrics(flagCount: () => number, perFlag = false): Metrics {
  const registry = createMetricRegistry()
  const requests = createRequestMetrics()
  registry.gauge('flagd_flags', 'Number of flags', flagCount)
  let syncStreams = () => 0
  let cacheBytes = () => 0
  registry.gauge('flagd_cache_bytes', 'Estimated bytes held by the request cache (limits.cacheBytes bounds it)', () => cacheBytes())
  const fanOut = registry.histogram(
    'flagd_sync_fanout_seconds',
    'Time to write one change to every open sync stream',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
  )
  // one series per flag, variant and reason: only when asked for (cardinality grows with the flags)
  let pendingEvaluations: () => readonly EvaluationCount[] = () => []
  const evaluations = perFlag
    ? registry.counter('flagd_evaluations_total', 'OFREP evaluations by flag, variant and reason', ['flag', 'variant', 'reason'], () =>
        pendingEvaluations().map(
          (r) => [{ flag: r.flag, variant: r.variant, reason: r.reason }, r.count] as [Record<string, string>, number],
        ),
      )
    : undefined
  registry.gauge('flagd_sync_streams', "Open SyncFlags streams of flagd's sync protocol (in-process providers)", () => syncStreams())
  const imports = registry.counter('flagd_imports_total', 'Imports by source and outcome', ['source', 'outcome'])
  const commitSeconds = registry.histogram(
    'flagd_store_commit_duration_seconds',
    'Durable state-file writes',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
  )
  const batch = registry.histogram(
    'flagd_store_commit_batch_size',
    'Changes carried by one write (group commit)',
    [1, 2, 4, 8, 16, 32, 64, 128],
  )
  const loginFailures = registry.counter('flagd_login_failures_total', 'Failed logins (bad credentials)')
  const deliveries = registry.counter('flagd_webhook_deliveries_total', 'Webhook delivery attempts by webhook and outcome', [
    'webhook',
    'outcome',
  ])
  return {
    contentType: PROMETHEUS_TEXT,
    render: async () => `${requests.render()}\n${registry.render()}`,
    request: (labels, seconds) => requests.observe(labels.method, labels.route, labels.status, seconds),
    commit(seconds, size) {
      commitSeconds.observe(seconds)
      batch.observe(size)
    },
    importFinished: (source, outcome) => imports.inc({ source, outcome }),
    loginFailed: () => loginFailures.inc(),
    webhookDelivery: (webhook, outcome) => deliveries.inc({ webhook, outcome }),
    countSyncStreams(read) {
      syncStreams = read
    },
    measureCache(read) {
      cacheBytes = read
    },
    syncFanOut: (seconds) => fanOut.observe(seconds),
    evaluations(rows) {
      for (const r of rows) evaluations?.inc({ flag: r.flag, variant: r.variant, reason: r.reason }, r.count)
    },
    countPendingEvaluations(read) {
      pendingEvaluations = read
    },
  }
}
