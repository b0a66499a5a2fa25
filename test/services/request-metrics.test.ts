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

test('runs and changes of method, route and status each count under their own label set', () => {
  // the recorder remembers the last request's series: every change of one label must leave it
  const m = createRequestMetrics()
  const seen: [string, string, number][] = [
    ['GET', '/a', 200],
    ['GET', '/a', 200],
    ['GET', '/a', 404],
    ['GET', '/b', 200],
    ['POST', '/a', 200],
    ['GET', '/a', 200],
    ['BREW', '/a', 200],
    ['BREW', '/a', 200],
    ['GET', '/a', 200],
  ]
  for (const [method, route, status] of seen) m.observe(method, route, status, 0.001)
  const count = (method: string, route: string, status: number) =>
    m.render().match(new RegExp(`^flagd_http_requests_total\\{method="${method}",route="${route}",status="${status}"\\} (\\d+)$`, 'm'))?.[1]
  expect(count('GET', '/a', 200)).toBe('4')
  expect(count('GET', '/a', 404)).toBe('1')
  expect(count('GET', '/b', 200)).toBe('1')
  expect(count('POST', '/a', 200)).toBe('1')
  expect(count('OTHER', '/a', 200)).toBe('2')
  expect(m.render().match(/^flagd_http_requests_total\{/gm)).toHaveLength(5)
})
