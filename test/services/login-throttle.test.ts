/** Login-throttle windows (contract §2): sliding, per username ignoring case and per address. */

import { expect, test } from 'bun:test'
import { createLoginThrottle } from '../../src/services/login-throttle.ts'

const T0 = 1_000_000
const make = () => createLoginThrottle({ maxFailures: 5, windowMs: 900_000 }, { maxFailures: 20, windowMs: 60_000 })

test('the 6th failure for a username is refused until the oldest leaves the window', () => {
  const t = make()
  for (let i = 0; i < 5; i++) {
    expect(t.retryAfter('alice', '10.0.0.1', T0 + i * 1000)).toBe(0)
    t.recordFailure('alice', '10.0.0.1', T0 + i * 1000)
  }
  expect(t.retryAfter('alice', '10.0.0.9', T0 + 5000)).toBe(895) // (T0 + 900 s) - (T0 + 5 s)
  expect(t.retryAfter('ALICE', '10.0.0.1', T0 + 5000)).toBeGreaterThan(0) // case is ignored
  expect(t.retryAfter('alice', '10.0.0.1', T0 + 900_000)).toBe(0) // the first failure has left the window
  expect(t.retryAfter('bob', '10.0.0.1', T0 + 5000)).toBe(0)
})

test('Retry-After is whole seconds, at least 1', () => {
  const t = make()
  for (let i = 0; i < 5; i++) t.recordFailure('alice', 'a', T0)
  expect(t.retryAfter('alice', 'a', T0 + 899_999)).toBe(1)
})

test('a success clears the username count', () => {
  const t = make()
  for (let i = 0; i < 5; i++) t.recordFailure('alice', 'a', T0)
  t.recordSuccess('Alice')
  expect(t.retryAfter('alice', 'a', T0)).toBe(0)
})

test('the 21st failure from one address within a minute is refused, whatever the usernames', () => {
  const t = make()
  for (let i = 0; i < 20; i++) t.recordFailure(`user${i}`, '10.0.0.1', T0 + i)
  expect(t.retryAfter('someone', '10.0.0.1', T0 + 20)).toBe(60)
  expect(t.retryAfter('someone', '10.0.0.2', T0 + 20)).toBe(0)
  expect(t.retryAfter('someone', '10.0.0.1', T0 + 60_000)).toBe(0)
})
