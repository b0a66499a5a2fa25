/** The verified-token cache: it saves signature checks, never validity. */

import { expect, test } from 'bun:test'
import { RequestCache } from '../../src/domain/request-cache.ts'
import { createSessionTokenCodec } from '../../src/http/session-token-codec.ts'

const SECRET = 's'.repeat(40)

test('a cached token stops verifying once it expires', async () => {
  let now = Date.now()
  const tokens = createSessionTokenCodec(SECRET, new RequestCache(1 << 20), () => now)
  const token = await tokens.sign('usr_1', 'ses_1', new Date(now), new Date(now + 60_000))
  expect(await tokens.verify(token)).toEqual({ sub: 'usr_1', sid: 'ses_1', exp: Math.floor((now + 60_000) / 1000) })
  expect(await tokens.verify(token)).toBeDefined() // served from the cache
  now += 61_000
  expect(await tokens.verify(token)).toBeUndefined()
})

test('a full cache still verifies every token correctly, and a tampered token is refused', async () => {
  const now = Date.parse('2026-12-01T00:00:00Z')
  const tokens = createSessionTokenCodec(SECRET, new RequestCache(1024), () => now) // room for two or three
  const exp = new Date(now + 60_000)
  const many = await Promise.all(Array.from({ length: 5 }, (_, i) => tokens.sign(`usr_${i}`, `ses_${i}`, new Date(now), exp)))
  for (let round = 0; round < 2; round++) {
    for (const [i, token] of many.entries()) expect((await tokens.verify(token))?.sub).toBe(`usr_${i}`)
  }
  const [head, , sig] = (many[0] as string).split('.')
  const otherPayload = (many[1] as string).split('.')[1]
  expect(await tokens.verify(`${head}.${otherPayload}.${sig}`)).toBeUndefined()
  expect(await tokens.verify('x'.repeat(5000))).toBeUndefined()
})
