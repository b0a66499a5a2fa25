/** The per-request metrics, rendered by hand as Prometheus text: names, labels, cumulative buckets. */

import { expect, test } from 'bun:test'
import { createRequestMetrics } from '../../src/observability/request-metrics.ts'

test('counters and a cumulative histogram per label set, in the Prometheus text format', () => {
  const m = createRequestMetrics()
  m.observe('GET', '/api/flags/{flagName}', 200, 0.0004)
  m.observe('GET', '/api/flags/{flagName}', 200, 0.003)
  m.observe('GET', '/api/flags/{flagName}', 200, 7)
  m.observe('BREW', 'unmatched', 404, 0.001)
  const text = m.render()
  const labels = 'method="GET",route="/api/flags/{flagName}",status="200"'
  expect(text).toContain('# TYPE flagd_http_requests_total counter')
  expect(text).toContain('# TYPE flagd_http_request_duration_seconds histogram')
  expect(text).toContain(`flagd_http_requests_total{${labels}} 3`)
  expect(text).toContain(`flagd_http_request_duration_seconds_bucket{le="0.0005",${labels}} 1`)
  expect(text).toContain(`flagd_http_request_duration_seconds_bucket{le="0.0025",${labels}} 1`)
  expect(text).toContain(`flagd_http_request_duration_seconds_bucket{le="0.005",${labels}} 2`)
  expect(text).toContain(`flagd_http_request_duration_seconds_bucket{le="2.5",${labels}} 2`)
  expect(text).toContain(`flagd_http_request_duration_seconds_bucket{le="+Inf",${labels}} 3`)
  expect(text).toContain(`flagd_http_request_duration_seconds_count{${labels}} 3`)
  expect(text).toMatch(new RegExp(`flagd_http_request_duration_seconds_sum\\{${labels.replace(/[{}]/g, '\\$&')}\\} 7\\.003`))
  // a client's made-up method cannot create label sets without bound
  expect(text).toContain('flagd_http_requests_total{method="OTHER",route="unmatched",status="404"} 1')
  expect(text).not.toContain('BREW')
})
