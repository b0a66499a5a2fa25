/** The usage counter's time of the last evaluation (docs/api.md): read from the clock, never from its once-a-second tick. */

import { expect, test } from 'bun:test'
import { UsageCounter } from '../../src/services/usage-counter.ts'
import { sampleView as sampleFlag } from '../helpers/sample-flag.ts'

test('the last evaluation is stamped when it happened, not at the last tick (nor before the flag existed)', () => {
  let now = Date.parse('2026-11-27T10:00:00.000Z')
  const counter = new UsageCounter(() => now, 'development')
  try {
    const flag = sampleFlag('a')
    now += 700 // between two ticks
    counter.count(flag, 'value', 'STATIC')
    const answer = { variant: 'value', reason: 'STATIC' }
    now += 200
    counter.countAnswer(flag, answer)
    now += 50
    counter.countTemplate({ fixed: [{ flag, variant: 'value', reason: 'STATIC' }] })
    const buckets = counter.peek()
    expect(
      buckets
        .map((b) => b.lastAt)
        .sort()
        .at(-1),
    ).toBe('2026-11-27T10:00:00.950Z')
    expect(buckets.reduce((n, b) => n + b.count, 0)).toBe(3)
  } finally {
    counter.stop()
  }
})
