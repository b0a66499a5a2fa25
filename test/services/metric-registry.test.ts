/** The small Prometheus registry that replaced prom-client: the text format of each metric kind. */

import { expect, test } from 'bun:test'
import { createMetricRegistry, PROMETHEUS_TEXT } from '../../src/observability/metric-registry.ts'

// a sample line of the text format 0.0.4: name, optional {label="value",...}, a number
const SAMPLE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\["\\n])*",?)*\})? (-?[0-9.e+-]+|\+Inf|NaN)$/

test('counters, histograms and gauges in the text format, in the order they were made', () => {
  const r = createMetricRegistry()
  let flags = 2
  r.gauge('t_flags', 'Flags', () => flags)
  const plain = r.counter('t_failures_total', 'Failures')
  const labelled = r.counter('t_deliveries_total', 'Deliveries', ['webhook', 'outcome'])
  const h = r.histogram('t_seconds', 'Durations', [0.01, 0.1])
  // before anything happened: an unlabelled counter reads 0, a labelled one has no series yet
  expect(r.render()).toContain('t_failures_total 0\n')
  expect(r.render()).not.toContain('t_deliveries_total{')
  plain.inc()
  plain.inc()
  labelled.inc({ webhook: 'ci "main"\\x\n', outcome: 'delivered' })
  labelled.inc({ webhook: 'ci "main"\\x\n', outcome: 'delivered' })
  labelled.inc({ webhook: 'ci', outcome: 'failed' })
  for (const v of [0.005, 0.01, 0.05, 3]) h.observe(v)
  flags = 7
  const text = r.render()
  expect(text.indexOf('t_flags')).toBeLessThan(text.indexOf('t_failures_total'))
  expect(text).toContain('# HELP t_flags Flags\n# TYPE t_flags gauge\nt_flags 7\n')
  expect(text).toContain('# TYPE t_failures_total counter\nt_failures_total 2\n')
  expect(text).toContain('t_deliveries_total{webhook="ci \\"main\\"\\\\x\\n",outcome="delivered"} 2\n')
  expect(text).toContain('t_deliveries_total{webhook="ci",outcome="failed"} 1\n')
  expect(text).toContain(
    [
      '# TYPE t_seconds histogram',
      't_seconds_bucket{le="0.01"} 2',
      't_seconds_bucket{le="0.1"} 3',
      't_seconds_bucket{le="+Inf"} 4',
      't_seconds_sum 3.065',
      't_seconds_count 4',
    ].join('\n'),
  )
  for (const line of text.split('\n')) if (line !== '' && !line.startsWith('#')) expect(line).toMatch(SAMPLE)
  expect(PROMETHEUS_TEXT).toStartWith('text/plain; version=0.0.4')
})
