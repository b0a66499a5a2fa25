import { expect, test } from 'bun:test'
import { changeInWords, protectionInWords } from '../../src/ui/app/change-words.ts'
import { writeTargeting } from '../../src/ui/app/rule-model.ts'

const utc = (iso: string) => iso.slice(0, 16).replace('T', ' ')
const split = (on: number) =>
  writeTargeting({
    rules: [],
    split: {
      by: '',
      weights: [
        { variant: 'true', weight: on },
        { variant: 'false', weight: 100 - on },
      ],
    },
    fallback: '',
  })

test('a value and the enabled switch read "field before → after"', () => {
  expect(changeInWords({ value: false, enabled: true }, { value: true })).toEqual(['value false → true'])
  expect(changeInWords({ value: false, enabled: true }, { enabled: false })).toEqual(['enabled true → false'])
})

test("a split that only moves its shares says each variant's share before and after", () => {
  expect(changeInWords({ targeting: split(10) }, { targeting: split(20) })).toEqual(['split true 10 % → 20 %', 'split false 90 % → 80 %'])
})

test('other targeting reads as its rules in words; an A/B share as the split of B', () => {
  const [line] = changeInWords({ targeting: null }, { targeting: split(20) })
  expect(line).toBe('rules none → (20 % true, 80 % false, sticky by targetingKey)')
  expect(changeInWords({ chancePercentB: 10 }, { chancePercentB: 25 })).toEqual(['split B 10 % → 25 %'])
})

test('a rollout reads in words, and fields that stay the same say nothing', () => {
  const rollout = { variant: 'true', start: '2030-01-01T09:00:00Z', end: '2030-01-08T09:00:00Z', fromPercent: 5, toPercent: 100 }
  expect(changeInWords({ rollout: null, value: true }, { rollout, value: true }, utc)).toEqual([
    'rollout none → rollout of "true" from 5 % on 2030-01-01 09:00 to 100 % on 2030-01-08 09:00',
  ])
  expect(changeInWords({ value: true }, { value: true })).toEqual(['no change to what it serves'])
})

test('the review dialog says how many approvals apply a request, verb agreeing with the count', () => {
  expect(protectionInWords('production', 1)).toBe(
    'production is protected: a change there is a change request, applied once 1 approval agrees.',
  )
  expect(protectionInWords('production', 2)).toBe(
    'production is protected: a change there is a change request, applied once 2 approvals agree.',
  )
  expect(protectionInWords('staging', 0)).toBe('staging is protected: a change there is a change request.')
})
