/**
 * Documents whose message would exceed gRPC's default 4 MiB receive limit are reported once per
 * caller and size, measured in UTF-8 bytes; smaller ones never are.
 */

import { expect, test } from 'bun:test'
import { createOversizeWatch, GRPC_CLIENT_DEFAULT_MAX_BYTES } from '../../src/sync/oversize-watch.ts'

function watch(limit?: number) {
  const warnings: string[] = []
  const w = createOversizeWatch((caller, bytes) => warnings.push(`${caller} ${bytes}`), limit)
  return { w, warnings }
}

test('the default limit is gRPC’s 4 MiB', () => {
  expect(GRPC_CLIENT_DEFAULT_MAX_BYTES).toBe(4_194_304)
})

test('a document over the limit is reported once per caller, however many streams and changes send it', () => {
  const { w, warnings } = watch(1000)
  const big = 'x'.repeat(1001)
  for (let i = 0; i < 5; i++) w.check('svc-a', big)
  w.check('svc-b', big)
  expect(warnings).toEqual(['svc-a 1001', 'svc-b 1001'])
  w.check('svc-a', 'y'.repeat(1200)) // a change that leaves it over the limit, at another size
  expect(warnings).toEqual(['svc-a 1001', 'svc-b 1001', 'svc-a 1200'])
})

test('the message around the document counts: a document a few bytes under the limit is reported', () => {
  const { w, warnings } = watch(1000)
  w.check('svc', 'x'.repeat(990))
  expect(warnings).toEqual(['svc 990'])
})

test('sizes are UTF-8 bytes: 400 three-byte characters are 1,200 bytes', () => {
  const { w, warnings } = watch(1000)
  w.check('svc', '€'.repeat(400))
  expect(warnings).toEqual(['svc 1200'])
})

test('documents whose message fits the limit are never reported', () => {
  const { w, warnings } = watch(1000)
  w.check('svc', 'x'.repeat(968))
  w.check('svc', '€'.repeat(322)) // 966 bytes
  w.check('svc', 'x'.repeat(10))
  expect(warnings).toEqual([])
})
