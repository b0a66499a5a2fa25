/**
 * A served app with one BOOLEAN flag under a guarded rollout written through the API, and an
 * application with the real OpenTelemetry SDK whose meter exports to it with an evaluation token
 * (docs/guarded-rollouts.md): what the end-to-end guard tests share. The rollout runs from an hour
 * before `now` to an hour after it; `reader.forceFlush()` sends what the meter recorded.
 */

import { afterEach, expect } from 'bun:test'
import type { Meter } from '@opentelemetry/api'
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto'
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics'
import type { Logger } from '../../src/observability/logger.ts'
import { serveApp } from './served-app.ts'
import { createTestApp, type TestApp, type TestResponse } from './test-app.ts'

/** The guarded flag's app, its admin caller, and the application's meter and reader. */
export interface GuardedApp {
  a: TestApp
  admin(method: string, path: string, body?: unknown): Promise<TestResponse>
  meter: Meter
  reader: PeriodicExportingMetricReader
  /** The labels OpenTelemetry's feature-flag conventions put on a point answered `variant`. */
  labels(variant: string): Record<string, string>
}

/**
 * Call at a test file's top level; `open()` then makes a guarded app (at `now`, the rollout from
 * `fromPercent` to `toPercent` of variant "true", `guard` as given), stopped after each test.
 */
export function guardedApps(flag: string, now: number) {
  const cleanups: (() => Promise<void>)[] = []
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c()
  })
  return {
    async open(guard: unknown, options: { fromPercent?: number; toPercent?: number; logger?: Logger } = {}): Promise<GuardedApp> {
      const a = await createTestApp({}, { now: () => new Date(now), ...(options.logger ? { logger: options.logger } : {}) })
      cleanups.push(() => a.close())
      const served = serveApp(a)
      cleanups.push(() => served.stop())
      const admin = (method: string, path: string, body?: unknown) =>
        a.req(method, path, { token: a.adminToken, ...(body ? { body } : {}) })
      expect((await admin('POST', '/api/flags', { name: flag, type: 'BOOLEAN', value: false })).status).toBe(201)
      const rollout = {
        variant: 'true',
        start: new Date(now - 3_600_000).toISOString(),
        end: new Date(now + 3_600_000).toISOString(),
        fromPercent: options.fromPercent ?? 0,
        toPercent: options.toPercent ?? 100,
        guard,
      }
      expect((await admin('PUT', `/api/flags/${flag}`, { type: 'BOOLEAN', value: false, rollout })).status).toBe(200)
      const token = (await admin('POST', '/api/tokens', { name: 'app', permissions: ['flag:evaluate'] })).body.token as string
      // the application: its own instruments, exported to flagd's OTLP endpoint
      const exporter = new OTLPMetricExporter({ url: `${served.base}/v1/metrics`, headers: { authorization: `Bearer ${token}` } })
      const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 })
      const provider = new MeterProvider({ readers: [reader] })
      cleanups.push(() => provider.shutdown())
      return {
        a,
        admin,
        meter: provider.getMeter('app'),
        reader,
        labels: (variant) => ({ 'feature_flag.key': flag, 'feature_flag.result.variant': variant }),
      }
    },
  }
}
