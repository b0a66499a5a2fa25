/** Which flags in-process providers were served, for usage (docs/openfeature.md#in-process-usage), on an injected clock. */

import { expect, test } from 'bun:test'
import { createSyncAudience, type HeldFlags } from '../../src/services/sync-audience.ts'

const held = (env: string, ...names: string[]): HeldFlags => ({ env, names: new Set(names) })

test('a live stream holds the flags of its document now; a closed one as of its closing; a fetch as of its sending', () => {
  let now = 1_000_000
  const audience = createSyncAudience(() => now)
  expect(audience.lastHeldAt('', 'shop/a')).toBeUndefined()
  const stream = audience.stream()
  expect(audience.lastHeldAt('', 'shop/a')).toBeUndefined() // opened, sent nothing yet
  stream.sent(held('', 'shop/a'))
  now += 5000
  expect(audience.lastHeldAt('', 'shop/a')).toBe(now) // live: now
  expect(audience.lastHeldAt('', 'other/b')).toBeUndefined() // not in its document
  stream.release()
  const closedAt = now
  now += 60_000
  expect(audience.lastHeldAt('', 'shop/a')).toBe(closedAt) // let go at once, not a moment later
  stream.release() // twice is once
  expect(audience.lastHeldAt('', 'shop/a')).toBe(closedAt)
  audience.served('', ['other/b'])
  expect(audience.lastHeldAt('', 'other/b')).toBe(now)
})

test('only the flags a document carried, and only in its environment', () => {
  let now = 1_000_000
  const audience = createSyncAudience(() => now)
  const stream = audience.stream()
  // the document left the TAG flag shop/tags out: it is not served
  stream.sent(held('staging', 'shop/a'))
  expect(audience.lastHeldAt('staging', 'shop/tags')).toBeUndefined()
  expect(audience.lastHeldAt('', 'shop/a')).toBeUndefined() // the default environment's flag was not served
  expect(audience.lastHeldAt(undefined, 'shop/a')).toBe(now) // in some environment
  // a newer document without shop/a: it was held until then
  now += 1000
  stream.sent(held('staging', 'shop/b'))
  const movedAt = now
  now += 1000
  expect(audience.lastHeldAt('staging', 'shop/a')).toBe(movedAt)
  expect(audience.lastHeldAt('staging', 'shop/b')).toBe(now)
  // two streams on one document: held until the last lets go
  const other = audience.stream()
  const shared = held('', 'x')
  stream.sent(shared)
  other.sent(shared)
  stream.release()
  now += 1000
  expect(audience.lastHeldAt('', 'x')).toBe(now)
  other.release()
  now += 1000
  expect(audience.lastHeldAt('', 'x')).toBe(now - 1000)
})
