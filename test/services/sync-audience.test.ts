/** Which flags in-process providers hold, for usage (docs/api.md#usage), on an injected clock. */

import { expect, test } from 'bun:test'
import { createSyncAudience } from '../../src/services/sync-audience.ts'

test('a live stream holds its scope now; a closed one as of its closing; a fetch as of its sending', () => {
  let now = 1_000_000
  const audience = createSyncAudience(() => now)
  expect(audience.lastHeldAt('shop/a')).toBeUndefined()
  const release = audience.held(['shop/'])
  now += 5000
  expect(audience.lastHeldAt('shop/a')).toBe(now) // live: now
  expect(audience.lastHeldAt('other/b')).toBeUndefined() // outside the stream's prefixes
  release()
  const closedAt = now
  now += 60_000
  expect(audience.lastHeldAt('shop/a')).toBe(closedAt)
  release() // twice is once
  expect(audience.lastHeldAt('shop/a')).toBe(closedAt)
  audience.served([]) // an unscoped fetch covers every flag
  expect(audience.lastHeldAt('other/b')).toBe(now)
})
