/** GO Feature Flag's query language read as the tool reads it (docs/migrations.md#from-go-feature-flag), and turned into flagd's rules. */

import { expect, test } from 'bun:test'
import { queryLogic, spellings } from '../../../src/domain/foreign/gofeatureflag-query-logic.ts'
import { parseGoFeatureFlagQuery, type QueryNode } from '../../../src/domain/foreign/gofeatureflag-query-parser.ts'

const tree = (q: string) => {
  const parsed = parseGoFeatureFlagQuery(q)
  if ('error' in parsed) throw new Error(parsed.error)
  return parsed.query
}
const error = (q: string) => {
  const parsed = parseGoFeatureFlagQuery(q)
  return 'error' in parsed ? parsed.error : undefined
}
const shape = (n: QueryNode): string =>
  n.kind === 'logical'
    ? `(${shape(n.left)} ${n.op} ${shape(n.right)})`
    : n.kind === 'not'
      ? `!${shape(n.query)}`
      : n.kind === 'present'
        ? `${n.path.join('.')} pr`
        : `${n.path.join('.')} ${n.op} ${JSON.stringify('value' in n.value ? n.value.value : null)}`

test.each<[string, string]>([
  ['a eq "x"', 'a eq "x"'],
  ['a == 1 and b != 2.5', '(a eq 1 and b ne 2.5)'],
  ['a EQ true or b pr', '(a eq true or b pr)'],
  // one precedence, from the left, as the tool's grammar has it
  ['a pr or b pr and c pr', '((a pr or b pr) and c pr)'],
  ['a pr and b pr or c pr', '((a pr and b pr) or c pr)'],
  ['a pr and (b pr or c pr)', '(a pr and (b pr or c pr))'],
  ['not (a pr)', '!a pr'],
  ['NOT(a.b.c ge 1.2.3)', '!a.b.c ge "1.2.3"'],
  ['user-id:x in ["a", "b"]', 'user-id:x in ["a","b"]'],
  ['n in [1, 2]', 'n in [1,2]'],
  ['n in [1.5,2.0]', 'n in [1.5,2]'],
  ['s co "a\\"b"', 's co "a\\\\\\"b"'],
  ['x le -3', 'x le -3'],
  ['x eq null', 'x eq null'],
])('%s', (query, expected) => {
  expect(shape(tree(query))).toBe(expected)
})

test.each<[string, string]>([
  ['country eq', 'at 11: expected a value after "eq"'],
  ['country is "FR"', 'at 9: expected an operator (eq, ne, lt, gt, le, ge, co, sw, ew, in, pr) after "country", found "is"'],
  ["country eq 'FR'", 'at 12: text is written in double quotes in GO Feature Flag queries'],
  ['(a pr', 'at 6: expected ")", found the end'],
  ['a pr b pr', 'at 6: expected "and", "or" or the end, found "b"'],
  ['a in [1, "x"]', 'at 6: a list holds values of one kind only (text, integers or decimals)'],
  ['a eq "open', 'at 6: unterminated text, or an escape other than \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX'],
  ['not a pr', 'at 5: expected "(" after "not"'],
  ['a eq 1e3', 'at 6: an integer with an exponent (1e3) is not a number GO Feature Flag reads'],
])('an error names the position: %s', (query, message) => {
  expect(error(query)).toBe(message)
})

test('text is compared ignoring case by listing its spellings, when there are few', () => {
  expect(spellings('fr')).toEqual(['fr', 'fR', 'Fr', 'FR'])
  expect(spellings('+33')).toEqual(['+33'])
  expect(spellings('é')).toBeUndefined()
  expect(spellings('abcdefg')).toBeUndefined()
  expect(queryLogic(tree('country eq "FR"'))).toEqual({ logic: { in: [{ var: 'country' }, ['fr', 'fR', 'Fr', 'FR']] } })
})

test('integers are compared as the tool does, on the whole part of the number', () => {
  expect(queryLogic(tree('age ge 18'))).toEqual({ logic: { and: [{ '!==': [{ var: 'age' }, null] }, { '>=': [{ var: 'age' }, 18] }] } })
  expect(queryLogic(tree('age lt 0'))).toEqual({ logic: { and: [{ '!==': [{ var: 'age' }, null] }, { '<=': [{ var: 'age' }, -1] }] } })
})

test.each<[string, string]>([
  ['name gt "m"', 'orders text ignoring case'],
  ['n co 3', '"co" is not an operation on integers'],
  ['v in 1.2.3', '"in" is not an operation on versions'],
  ['a in "x"', 'compares "in" only with a list'],
  ['a.b in [1, 2]', 'nested number'],
])('not kept exactly: %s', (query, reason) => {
  const result = queryLogic(tree(query))
  expect('problem' in result ? result.problem : '').toContain(reason)
})

test('a query is bounded: parentheses 32 deep, 500 tests', () => {
  expect(error(`${'('.repeat(33)}a pr${')'.repeat(33)}`)).toBe('at 33: parentheses nested more than 32 deep are not imported')
  expect(error(Array.from({ length: 501 }, () => 'a pr').join(' and '))).toBe('at 4501: a query of more than 500 tests is not imported')
  expect(error(Array.from({ length: 500 }, () => 'a pr').join(' or '))).toBeUndefined()
})

test('text of any length, with every escape, is read whole; an unterminated one or a bad escape is said', () => {
  // a regular expression gives up on text this long and would call it unterminated
  const long = 'x'.repeat(4_000_000)
  const read = tree(`a eq "${long}"`) as { value: { value: string } }
  expect(read.value.value.length).toBe(long.length)
  expect(shape(tree('a eq "q\\"u\\\\o\\/t\\be\\fd\\n\\r\\t\\u00e9" and b pr'))).toBe(
    '(a eq "q\\\\\\"u\\\\\\\\o\\\\/t\\\\be\\\\fd\\\\n\\\\r\\\\t\\\\u00e9" and b pr)',
  )
  for (const bad of ['a eq "x\\q"', 'a eq "x\\u12"', 'a eq "x\\u12G4"', 'a eq "x\\', 'a eq "x'])
    expect(error(bad)).toBe('at 6: unterminated text, or an escape other than \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX')
})
