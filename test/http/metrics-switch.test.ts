/**
 * GET /metrics (docs/operations.md#the-daemon-on-disk-and-at-run-time) is served while `metrics.enabled` is on (the default)
 * and is no route at all while it is off; what the text holds is the daemon's test
 * (`test/cli/observability.test.ts`).
 */

import { afterEach, expect, test } from 'bun:test'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let t: TestApp | undefined
afterEach(async () => {
  await t?.close()
  t = undefined
})

test('on by default: Prometheus text', async () => {
  t = await createTestApp()
  const res = await t.req('GET', '/metrics')
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toStartWith('text/plain')
  expect(res.text).toContain('flagd_http_requests_total')
})

test('off with metrics.enabled=false: 404', async () => {
  t = await createTestApp({ FLAGD_METRICS_ENABLED: 'false' })
  expect((await t.req('GET', '/metrics')).status).toBe(404)
})
