/** Flag names and the flag/group rule (docs/api.md#flag-names). */

import { expect, test } from 'bun:test'
import { nameCollision, nameProblem } from '../../src/domain/flag-name.ts'

test.each([
  'a',
  'app/checkout/new_flow',
  'A.b-c_d',
  'team:checkout',
  '_internal',
  'ops/_hidden/x:y',
  '1/2/3/4/5',
  'x'.repeat(64),
  `${'a'.repeat(63)}/${'b'.repeat(63)}/${'c'.repeat(63)}/${'d'.repeat(63)}`,
])('valid: %s', (name) => {
  expect(nameProblem(name)).toBeUndefined()
})

test.each([
  ['', 'empty'],
  ['/a', 'empty segments'],
  ['a/', 'empty segments'],
  ['a//b', 'empty segments'],
  ['a/.b', 'start with a letter, a digit or _'],
  [':a', 'start with a letter, a digit or _'],
  ['a b', 'may contain only'],
  ['a/ü', 'may contain only'],
  ['x'.repeat(65), '64'],
  [`${'a'.repeat(64)}/${'b'.repeat(64)}/${'c'.repeat(64)}/${'d'.repeat(64)}`, '255'],
  ['app/constructor', 'not allowed'],
  ['prototype', 'not allowed'],
  ['__proto__', 'not allowed'],
  ['a/__proto__', 'not allowed'],
])('invalid: %s', (name, reason) => {
  expect(nameProblem(name)).toContain(reason)
})

test('flag/group collisions', () => {
  expect(nameCollision('a/b', ['a'])).toBe('a')
  expect(nameCollision('a', ['a/b/c'])).toBe('a/b/c')
  expect(nameCollision('ab', ['a/b', 'a'])).toBeUndefined()
  expect(nameCollision('a/b', ['a/bc', 'a/b/c'.slice(0, 3)])).toBeUndefined()
  expect(nameCollision('a/b', ['a'], 'a')).toBeUndefined()
})

test('the name index finds the same collisions as the scan', async () => {
  const { indexNames } = await import('../../src/domain/flag-name.ts')
  const names = ['a', 'b/c', 'b/d/e', 'x/y']
  const index = indexNames(names)
  for (const probe of ['a/b', 'b', 'b/d', 'b/d/e/f', 'x', 'x/y/z', 'q', 'b/c2', 'a']) {
    expect(index.collision(probe)).toBe(nameCollision(probe, names))
  }
})
