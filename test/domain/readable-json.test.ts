/**
 * The export file's layout (docs/targeting.md#flagd-format): whatever the value, it parses back to
 * what `JSON.stringify` gives; short values stay on one line, long lists of short items share lines.
 */

import { expect, test } from 'bun:test'
import { readableJson } from '../../src/domain/readable-json.ts'

test('parses back to the same value, whatever its shape', () => {
  const values: unknown[] = [
    null,
    0,
    'x',
    [],
    {},
    { a: undefined, b: [undefined, 1], c: { d: [] } },
    { flags: { f: { state: 'ENABLED', variants: { on: true, off: false }, targeting: { if: [{ var: 'a' }, 'on', null] } } } },
    Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? [String(i), i] : i % 3 === 1 ? { deep: { list: Array(40).fill(i) } } : `t${i}`)),
    { 'weird "key"\n': 'value with \u2028 and "quotes"', long: 'x'.repeat(500) },
  ]
  for (const v of values) expect(JSON.parse(readableJson(v))).toEqual(JSON.parse(JSON.stringify(v) ?? 'null'))
})

test('a short value stays on one line; a long list of short items shares lines, each within the width', () => {
  expect(readableJson({ on: true, off: false })).toBe('{"on":true,"off":false}\n')
  const buckets = Array.from({ length: 100 }, (_, k) => [String(k), 95])
  const text = readableJson({ flags: { f: { targeting: { fractional: buckets } } } })
  const lines = text.trimEnd().split('\n')
  expect(lines.length).toBeLessThan(30)
  for (const line of lines) expect(line.length).toBeLessThanOrEqual(100)
})
