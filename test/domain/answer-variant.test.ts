/** The variant name of an answer without a rule (docs/openfeature.md#variant-names). */

import { expect, test } from 'bun:test'
import { answerVariant } from '../../src/domain/answer-variant.ts'
import type { Flag } from '../../src/domain/flag.ts'

const flag = (over: Partial<Flag>): Flag => ({
  id: 'flg_x',
  name: 'x',
  type: 'STRING',
  description: '',
  defaultValue: 'd',
  valueExists: true,
  value: 'served',
  createdAt: '2026-12-01T00:00:00.000Z',
  updatedAt: '2026-12-01T00:00:00.000Z',
  revision: 12,
  ...over,
})

test('a listed variant holding the answer names it; else value or default', () => {
  expect(answerVariant(flag({ variants: { gold: 'served' } }))?.variant).toBe('gold')
  expect(answerVariant(flag({}))?.variant).toBe('value')
  expect(answerVariant(flag({ valueExists: false, value: undefined }))?.variant).toBe('default')
})

test("a variant named value holding something else: the name carries the revision this environment last saw change, not the flag's", () => {
  // revision 12 was a change confined to another environment; this one last saw the flag change at 10
  const seen = flag({ variants: { value: 'other' }, servedRevision: 10 })
  expect(answerVariant(seen)?.variant).toBe('value-10')
  expect(answerVariant(flag({ variants: { value: 'other' } }))?.variant).toBe('value-12')
})
