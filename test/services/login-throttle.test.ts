/**
 * Login-throttle windows (docs/api.md#authentication): sliding windows per username and address, per address and
 * per username overall. Attempts are reserved before the password check: simultaneous attempts
 * beyond the free budget wait for those in flight, so concurrency never gets more checks than the
 * limit, and correct logins are never refused for being simultaneous.
 */

import { expect, test } from 'bun:test'
import { type Attempt, createLoginThrottle, type LoginThrottle } from '../../src/services/login-throttle.ts'

const T0 = 1_000_000
const make = (perUser = 100) =>
  createLoginThrottle({
    perUserAddress: { maxFailures: 5, windowMs: 900_000 },
    perAddress: { maxFailures: 20, windowMs: 60_000 },
    perUser: { maxFailures: perUser, windowMs: 900_000 },
  })
const at = (ms: number) => () => ms
async function fail(t: LoginThrottle, user: string, address: string, ms: number) {
  const a = await t.begin(user, address, at(ms))
  if (typeof a === 'number') throw new Error(`refused: ${a}`)
  a.failed()
}
const pending = <T>(p: Promise<T>) => Promise.race([p.then(() => 'settled'), Bun.sleep(20).then(() => 'pending')])

test('the 6th attempt after 5 failures from one address waits until the oldest leaves the window', async () => {
  const t = make()
  for (let i = 0; i < 5; i++) await fail(t, 'alice', '10.0.0.1', T0 + i * 1000)
  expect(await t.begin('alice', '10.0.0.1', at(T0 + 5000))).toBe(895) // (T0 + 900 s) - (T0 + 5 s)
  expect(typeof (await t.begin('ALICE', '10.0.0.1', at(T0 + 5000)))).toBe('number') // case is ignored
  expect(typeof (await t.begin('alice', '10.0.0.1', at(T0 + 900_000)))).toBe('object') // the first failure has left
})

test('a stranger at another address cannot lock the owner out', async () => {
  const t = make()
  for (let i = 0; i < 5; i++) await fail(t, 'admin', '203.0.113.9', T0)
  expect(typeof (await t.begin('admin', '203.0.113.9', at(T0)))).toBe('number')
  expect(typeof (await t.begin('admin', '10.0.0.1', at(T0)))).toBe('object')
})

test('per username from all addresses: a ceiling for distributed guessing', async () => {
  const t = make(12)
  for (let i = 0; i < 12; i++) await fail(t, 'admin', `198.51.100.${i}`, T0)
  expect(await t.begin('admin', '10.0.0.1', at(T0 + 1))).toBeGreaterThan(0)
  expect(typeof (await t.begin('bob', '10.0.0.1', at(T0 + 1)))).toBe('object')
})

test('the 21st failure from one address within a minute is refused, whatever the usernames', async () => {
  const t = make()
  for (let i = 0; i < 20; i++) await fail(t, `user${i}`, '10.0.0.1', T0 + i)
  expect(await t.begin('someone', '10.0.0.1', at(T0 + 20))).toBe(60)
  expect(typeof (await t.begin('someone', '10.0.0.2', at(T0 + 20)))).toBe('object')
  expect(typeof (await t.begin('someone', '10.0.0.1', at(T0 + 60_000)))).toBe('object')
})

test('of 200 simultaneous attempts, 5 are let through; the rest wait, and are refused once those fail', async () => {
  const t = make()
  const attempts = Array.from({ length: 200 }, () => t.begin('admin', '10.0.0.1', at(T0)))
  await Bun.sleep(10)
  const first = await Promise.all(attempts.slice(0, 5))
  expect(first.every((a) => typeof a === 'object')).toBe(true)
  expect(await pending(attempts[5] as Promise<unknown>)).toBe('pending') // waiting, not yet checked
  for (const a of first as Attempt[]) a.failed()
  const rest = await Promise.all(attempts.slice(5))
  expect(rest.every((r) => typeof r === 'number')).toBe(true)
})

test('simultaneous correct logins are never refused: each waits for a place, then goes through', async () => {
  const t = make()
  const attempts = Array.from({ length: 16 }, () => t.begin('ci', '10.0.0.1', at(T0)))
  const settledInOrder: number[] = []
  await Promise.all(
    attempts.map(async (p, i) => {
      const a = await p
      if (typeof a === 'number') throw new Error(`refused: ${a}`)
      await Bun.sleep(1)
      a.succeeded()
      settledInOrder.push(i)
    }),
  )
  expect(settledInOrder).toHaveLength(16)
})

test('a success clears that username-and-address count', async () => {
  const t = make()
  for (let i = 0; i < 4; i++) await fail(t, 'alice', 'a', T0)
  const ok = await t.begin('alice', 'a', at(T0))
  if (typeof ok === 'number') throw new Error('refused')
  ok.succeeded()
  for (let i = 0; i < 5; i++) await fail(t, 'alice', 'a', T0 + 1)
  expect(typeof (await t.begin('alice', 'a', at(T0 + 2)))).toBe('number')
})

test('clear (password set, user unlock) forgets every count of a username', async () => {
  const t = make()
  for (let i = 0; i < 5; i++) await fail(t, 'alice', 'a', T0)
  t.clear('Alice')
  expect(typeof (await t.begin('alice', 'a', at(T0)))).toBe('object')
})

test('Retry-After is whole seconds, at least 1', async () => {
  const t = make()
  for (let i = 0; i < 5; i++) await fail(t, 'alice', 'a', T0)
  expect(await t.begin('alice', 'a', at(T0 + 899_999))).toBe(1)
})
