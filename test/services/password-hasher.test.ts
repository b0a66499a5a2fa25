/** docs/api.md#authentication: argon2id, and at most 2 hashes computed at once while the rest wait. */

import { expect, test } from 'bun:test'
import { createPasswordHasher, type HashBackend } from '../../src/services/password-hasher.ts'

function countingBackend() {
  let running = 0
  let peak = 0
  const backend: HashBackend = {
    async hash(password) {
      peak = Math.max(peak, ++running)
      await Bun.sleep(5)
      running--
      return `hashed:${password}`
    },
    async verify(password, hash) {
      peak = Math.max(peak, ++running)
      await Bun.sleep(5)
      running--
      return hash === `hashed:${password}`
    },
  }
  return { backend, peak: () => peak }
}

test('16 hashes and verifies at once run at most 2 at a time, and all complete', async () => {
  const counter = countingBackend()
  const hasher = createPasswordHasher(undefined, undefined, counter.backend)
  const hashes = await Promise.all(Array.from({ length: 16 }, (_, i) => hasher.hash(`pw${i}`)))
  const checks = await Promise.all(hashes.map((h, i) => hasher.verify(`pw${i}`, h)))
  await Promise.all(Array.from({ length: 8 }, () => hasher.verifyDummy('x')))
  expect(checks.every(Boolean)).toBe(true)
  expect(counter.peak()).toBe(2)
})

test('a damaged stored hash never authenticates, and does not throw', async () => {
  const hasher = createPasswordHasher({ memoryCost: 1024, timeCost: 1 })
  expect(await hasher.verify('anything', 'not-a-hash')).toBe(false)
  expect(await hasher.verify('right', await hasher.hash('right'))).toBe(true)
  expect(await hasher.verify('wrong', await hasher.hash('right'))).toBe(false)
})
