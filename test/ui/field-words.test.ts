import { expect, test } from 'bun:test'
import { changeInWords } from '../../src/ui/app/change-words.ts'
import { fieldWord } from '../../src/ui/app/field-words.ts'

test("a review names a flag's fields in words, not by their API names", () => {
  expect(fieldWord('enumValues')).toBe('allowed values')
  expect(fieldWord('defaultValue')).toBe('default value')
  expect(fieldWord('variants')).toBe('variants')
  // an own property only: an inherited name is a field name like any other
  expect(fieldWord('constructor')).toBe('constructor')
  expect(changeInWords({ enumValues: ['s', 'm', 'l'] }, { enumValues: ['s', 'm'] })).toEqual(['allowed values ["s","m","l"] → ["s","m"]'])
})
