/** docs/openfeature.md#in-process-usage: decoding OTLP's evaluation counter, point by point. */

import { expect, test } from 'bun:test'
import { decodeOtlpMetrics } from '../../src/http/otlp-metrics.ts'

const report = (point: Record<string, unknown>) =>
  new TextEncoder().encode(
    JSON.stringify({
      resourceMetrics: [
        {
          scopeMetrics: [
            {
              metrics: [
                {
                  name: 'feature_flag.evaluation_success_total',
                  sum: {
                    aggregationTemporality: 2,
                    dataPoints: [
                      {
                        attributes: [
                          { key: 'feature_flag.key', value: { stringValue: 'f' } },
                          { key: 'feature_flag.result.variant', value: { stringValue: 'on' } },
                        ],
                        startTimeUnixNano: '1',
                        ...point,
                      },
                    ],
                  },
                },
              ],
            },
          ],
        },
      ],
    }),
  )

test('a point whose value proto3 left out is 0 (a counter that restarted), not malformed', () => {
  const { points, rejected } = decodeOtlpMetrics(report({}), true)
  expect(rejected).toBe(0)
  expect(points).toHaveLength(1)
  expect(points[0]?.value).toBe(0)
})

test('a fraction or a negative count is malformed', () => {
  expect(decodeOtlpMetrics(report({ asDouble: 0.4 }), true).rejected).toBe(1)
  expect(decodeOtlpMetrics(report({ asInt: '-5' }), true).rejected).toBe(1)
  expect(decodeOtlpMetrics(report({ asInt: '7' }), true).points[0]?.value).toBe(7)
})
