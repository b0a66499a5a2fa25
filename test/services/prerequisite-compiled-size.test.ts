/**
 * Prerequisites in flagd's format stay within the bound a write is checked against
 * (docs/targeting.md#prerequisites-in-flagd-format): a chain of flags whose rules split by
 * `fractional` compiles into rules no larger than 256 KiB each, and still answers as OFREP does.
 */

import { afterEach, beforeEach, expect, test } from 'bun:test'
import { systemPrincipal } from '../../src/domain/principal.ts'
import { EXPANDED_RULE_MAX } from '../../src/domain/targeting/expanded-size.ts'
import { oracle } from '../helpers/flagd-oracle.ts'
import { createTestApp, SYSTEM, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
beforeEach(async () => {
  t = await createTestApp()
})
afterEach(async () => {
  await t.close()
})

/** A rule of `splits` branches, each a 50/50 split. */
function splitting(splits: number): Record<string, unknown> {
  const args: unknown[] = []
  for (let i = 0; i < splits; i++)
    args.push(
      { '==': [{ var: 'branch' }, i] },
      {
        fractional: [
          ['a', 50],
          ['b', 50],
        ],
      },
    )
  args.push(null)
  return { if: args }
}

test('a chain of five links of splitting rules compiles within the bound, with OFREP answers', async () => {
  const targeting = splitting(40)
  for (let i = 0; i < 6; i++)
    await t.app.services.flags.create(SYSTEM, {
      name: `chain/c${i}`,
      type: 'STRING',
      value: 'a',
      variants: { a: 'a', b: 'b' },
      targeting,
      ...(i > 0 ? { prerequisites: [{ flag: `chain/c${i - 1}`, variants: ['a'] }] } : {}),
    })
  const doc = JSON.parse((await t.req('GET', '/api/migrations/export?format=flagd', { token: t.adminToken })).text)
  for (let i = 0; i < 6; i++) expect(JSON.stringify(doc.flags[`chain/c${i}`].targeting).length).toBeLessThanOrEqual(EXPANDED_RULE_MAX)
  for (const branch of [0, 7, 39, 40])
    for (let k = 0; k < 20; k++) {
      const context = { targetingKey: `user-${k}`, branch }
      const ours = JSON.parse(t.app.services.evaluations.one(systemPrincipal('cli'), 'chain/c5', context).text)
      expect(oracle(doc, 'chain/c5', context)).toMatchObject({ value: ours.value, reason: ours.reason })
    }
})

test('a required flag split by an attribute answers in flagd format as OFREP does, the attribute missing or not text', async () => {
  const create = (body: Record<string, unknown>) => t.app.services.flags.create(SYSTEM, body)
  const split = (seed: unknown, a: string, b: string) => ({ fractional: [seed, [a, 50], [b, 50]] })
  await create({ name: 'p0', type: 'STRING', value: 'a', variants: { a: 'a', b: 'b' }, targeting: split({ var: 'email' }, 'a', 'b') })
  await create({
    name: 'p1',
    type: 'STRING',
    value: 'a',
    variants: { a: 'a', b: 'b' },
    targeting: split({ cat: [{ var: '$flagd.flagKey' }, { var: 'org' }] }, 'a', 'b'),
    prerequisites: [{ flag: 'p0', variants: ['a'] }],
  })
  await create({
    name: 'top',
    type: 'STRING',
    value: 'off',
    variants: { on: 'on', no: 'no' },
    targeting: split({ var: 'email' }, 'on', 'no'),
    prerequisites: [{ flag: 'p1', variants: ['b'] }],
  })
  const doc = JSON.parse(t.app.services.migrations.exportFlagd(SYSTEM.principal).text)
  const differences: string[] = []
  for (let i = 0; i < 300; i++) {
    const context: Record<string, unknown> = {
      ...(i % 7 === 0 ? {} : { targetingKey: `u${i}` }),
      ...(i % 3 === 0 ? {} : { email: i % 5 === 0 ? 12 : `e${i}@example.com` }),
      org: `o${i % 11}`,
    }
    for (const name of ['p0', 'p1', 'top']) {
      const ours = JSON.parse(t.app.services.evaluations.one(systemPrincipal('cli'), name, context).text)
      const theirs = oracle(doc, name, context)
      if (JSON.stringify(ours.value) !== JSON.stringify(theirs.value))
        differences.push(`${name} ${JSON.stringify(context)}: ${ours.value} vs ${theirs.value}`)
    }
  }
  expect(differences).toEqual([])
})
