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
