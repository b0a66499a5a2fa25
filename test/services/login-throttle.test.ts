/**
 * Login-throttle windows (contract §2): sliding windows per username and address, per address and
 * per username overall; attempts are reserved before the password check, so concurrency cannot get
 * more checks than the limit.
 */

import { expect, test } from 'bun:test'
import { createLoginThrottle, type Attempt, type LoginThrottle } from '../../src/services/login-throttle.ts'

const T0 = 1_000_000
const make = (perUser = 100) =>
  createLoginThrottle({
    perUserAddress: { maxFailures: 5, windowMs: 900_000 },
    perAddress: { maxFailures: 20, windowMs: 60_000 },
    perUser: { maxFailures: perUser, windowMs: 900_000 },
  })
const fail = (t: LoginThrottle, user: string, address: string, at: number) => {
  const a = t.begin(user, address, at)
  if (typeof a === 'number') throw new Error(`refused: ${a}`)
  a.failed()
}

test('the 6th attempt after 5 failures from one address waits until the oldest leaves the window', () => {
  const t = make()
  for (let i = 0; i < 5; i++) fail(t, 'alice', '10.0.0.1', T0 + i * 1000)
  expect(t.begin('alice', '10.0.0.1', T0 + 5000)).toBe(895) // (T0 + 900 s) - (T0 + 5 s)
  expect(typeof t.begin('ALICE', '10.0.0.1', T0 + 5000)).toBe('number') // case is ignored
  expect(typeof t.begin('alice', '10.0.0.1', T0 + 900_000)).toBe('object') // the first failure has left
})

test('a stranger at another address cannot lock the owner out', () => {
  const t = make()
  for (let i = 0; i < 5; i++) fail(t, 'admin', '203.0.113.9', T0)
  expect(typeof t.begin('admin', '203.0.113.9', T0)).toBe('number')
  expect(typeof t.begin('admin', '10.0.0.1', T0)).toBe('object')
})

test('per username from all addresses: a ceiling for distributed guessing', () => {
  const t = make(12)
  for (let i = 0; i < 12; i++) fail(t, 'admin', `198.51.100.${i}`, T0)
  expect(t.begin('admin', '10.0.0.1', T0 + 1)).toBeGreaterThan(0)
  expect(typeof t.begin('bob', '10.0.0.1', T0 + 1)).toBe('object')
})

test('the 21st failure from one address within a minute is refused, whatever the usernames', () => {
  const t = make()
  for (let i = 0; i < 20; i++) fail(t, `user${i}`, '10.0.0.1', T0 + i)
  expect(t.begin('someone', '10.0.0.1', T0 + 20)).toBe(60)
  expect(typeof t.begin('someone', '10.0.0.2', T0 + 20)).toBe('object')
  expect(typeof t.begin('someone', '10.0.0.1', T0 + 60_000)).toBe('object')
})

test('of 200 simultaneous attempts, at most 5 are let through to a password check', () => {
  const t = make()
  const outcomes = Array.from({ length: 200 }, () => t.begin('admin', '10.0.0.1', T0))
  const reserved = outcomes.filter((o): o is Attempt => typeof o === 'object')
  expect(reserved).toHaveLength(5)
  for (const a of reserved) a.failed()
  expect(typeof t.begin('admin', '10.0.0.1', T0 + 1)).toBe('number')
})

test('a success withdraws its reservation and clears that username-and-address count', () => {
  const t = make()
  for (let i = 0; i < 4; i++) fail(t, 'alice', 'a', T0)
  const ok = t.begin('alice', 'a', T0)
  if (typeof ok === 'number') throw new Error('refused')
  ok.succeeded()
  for (let i = 0; i < 5; i++) fail(t, 'alice', 'a', T0 + 1)
  expect(typeof t.begin('alice', 'a', T0 + 2)).toBe('number')
})

test('clear (password set, user unlock) forgets every count of a username', () => {
  const t = make()
  for (let i = 0; i < 5; i++) fail(t, 'alice', 'a', T0)
  t.clear('Alice')
  expect(typeof t.begin('alice', 'a', T0)).toBe('object')
})

test('Retry-After is whole seconds, at least 1', () => {
  const t = make()
  for (let i = 0; i < 5; i++) fail(t, 'alice', 'a', T0)
  expect(t.begin('alice', 'a', T0 + 899_999)).toBe(1)
})
