import { expect, test } from 'bun:test'
import { closestSpelling, unknownFieldReason } from '../../src/domain/spelling-suggestion.ts'

const FLAG_FIELDS = ['name', 'type', 'description', 'defaultValue', 'valueExists', 'value', 'enabled', 'targeting']

test('a near miss (a typo, a swapped pair, a dropped letter) names the closest known word', () => {
  expect(closestSpelling('vaule', FLAG_FIELDS)).toBe('value')
  expect(closestSpelling('permisions', ['permissions', 'password-stdin', 'flag-prefix'])).toBe('permissions')
  expect(closestSpelling('desciption', FLAG_FIELDS)).toBe('description')
  expect(closestSpelling('Value', FLAG_FIELDS)).toBe('value')
})

test('nothing is suggested for a word that is not close to any, nor for a huge one', () => {
  expect(closestSpelling('colour', FLAG_FIELDS)).toBeUndefined()
  expect(closestSpelling('x', FLAG_FIELDS)).toBeUndefined()
  expect(closestSpelling('v'.repeat(100_000), FLAG_FIELDS)).toBeUndefined()
  expect(closestSpelling('vaule', [])).toBeUndefined()
})

test('anyDistance always names the closest (for configuration keys, where every key is ours)', () => {
  expect(closestSpelling('prot', ['port', 'host'], { anyDistance: true })).toBe('port')
})

test('unknownFieldReason adds the suggestion to the reason only when there is one', () => {
  expect(unknownFieldReason('vaule', FLAG_FIELDS)).toBe('unknown field; did you mean "value"?')
  expect(unknownFieldReason('colour', FLAG_FIELDS)).toBe('unknown field')
})
