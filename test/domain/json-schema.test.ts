/** OBJECT flags' jsonSchema: ajv with patterns on re2js, each pattern its own, bounded by the check budget. */

import { expect, test } from 'bun:test'
import { compileJsonSchema, jsonSchemaProblem } from '../../src/domain/json-schema.ts'
import { newCheckBudget } from '../../src/domain/regex-pattern.ts'

test('every pattern of a schema is checked as itself (ajv keys compiled patterns by their text)', () => {
  const schema = { type: 'object', properties: { a: { type: 'string', pattern: '^x' }, b: { type: 'string', pattern: '^y' } } }
  expect(jsonSchemaProblem(schema, { a: 'x1', b: 'y1' }, newCheckBudget())).toBeUndefined()
  expect(jsonSchemaProblem(schema, { a: 'x1', b: 'x1' }, newCheckBudget())).toContain('/b must match pattern')
  expect(jsonSchemaProblem({ type: 'string', pattern: '^(a+)+$' }, `${'a'.repeat(1000)}!`, newCheckBudget())).toContain(
    'must match pattern',
  )
})

test('a schema is refused when it cannot be used: remote $ref, a pattern RE2 cannot run, a program too large', () => {
  expect(compileJsonSchema({ $ref: 'https://example.com/x.json' })).toContain('not a usable JSON Schema')
  expect(compileJsonSchema({ type: 'string', pattern: '(a)\\1' })).toContain('not a usable JSON Schema')
  expect(compileJsonSchema({ type: 'string', pattern: '[a-z]{0,200}[0-9]{0,200}' })).toContain('too large to check quickly')
})

test('matching draws on the budget: a costly check is refused, not run to the end', () => {
  const schema = { type: 'array', items: { type: 'string', pattern: '[a-z]{0,60}X' } }
  const value = Array.from({ length: 2000 }, () => `${'a'.repeat(2000)}X`)
  expect(jsonSchemaProblem(schema, value, newCheckBudget(1_000_000))).toContain('cannot be checked against jsonSchema quickly enough')
})
