/**
 * Prometheus metrics with prom-client (GET /metrics): requests and their duration by route and
 * status, flag count, imports by source and outcome, store commit duration and batch size, failed
 * logins, webhook deliveries. Routes are labelled by template as the OpenAPI document writes them
 * (`/api/flags/{flagName}`, `/api/users/{userId}`), never by concrete path, so label cardinality
 * stays bounded.
 */

import { Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { ImportOutcome, ImportSource } from '../services/telemetry.ts'
import { createRequestMetrics } from './request-metrics.ts'

/** The metrics of one daemon. */
export interface Metrics {
  readonly contentType: string
  render(): Promise<string>
  request(labels: { method: string; route: string; status: number }, seconds: number): void
  commit(seconds: number, batchSize: number): void
  importFinished(source: ImportSource, outcome: ImportOutcome): void
  loginFailed(): void
  /** One webhook delivery attempt's outcome: `delivered`, `retried` (failed, will retry) or `failed` (given up). */
  webhookDelivery(webhook: string, outcome: 'delivered' | 'retried' | 'failed'): void
}

/** Creates the registry; `flagCount` is read at scrape time. */
export function createMetrics(flagCount: () => number): Metrics {
  const registry = new Registry()
  const registers = [registry]
  const requests = createRequestMetrics()
  new Gauge({ name: 'flagd_flags', help: 'Number of flags', registers, collect() { this.set(flagCount()) } })
  const imports = new Counter({ name: 'flagd_imports_total', help: 'Imports by source and outcome', labelNames: ['source', 'outcome'], registers })
  const commitSeconds = new Histogram({ name: 'flagd_store_commit_duration_seconds', help: 'Durable state-file writes', buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1], registers })
  const batch = new Histogram({ name: 'flagd_store_commit_batch_size', help: 'Changes carried by one write (group commit)', buckets: [1, 2, 4, 8, 16, 32, 64, 128], registers })
  const loginFailures = new Counter({ name: 'flagd_login_failures_total', help: 'Failed logins (bad credentials)', registers })
  const deliveries = new Counter({ name: 'flagd_webhook_deliveries_total', help: 'Webhook delivery attempts by webhook and outcome', labelNames: ['webhook', 'outcome'], registers })
  return {
    contentType: registry.contentType,
    render: async () => `${requests.render()}\n${await registry.metrics()}`,
    request: (labels, seconds) => requests.observe(labels.method, labels.route, labels.status, seconds),
    commit(seconds, size) {
      commitSeconds.observe(seconds)
      batch.observe(size)
    },
    importFinished: (source, outcome) => imports.inc({ source, outcome }),
    loginFailed: () => loginFailures.inc(),
    webhookDelivery: (webhook, outcome) => deliveries.inc({ webhook, outcome }),
  }
}
