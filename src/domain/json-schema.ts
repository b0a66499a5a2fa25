/**
 * OBJECT flags' `jsonSchema` constraint (docs/targeting.md#rules): a JSON Schema, draft 2020-12, checked
 * with ajv (the most used and best-kept validator for JavaScript, compiling a schema to a function
 * once). Patterns in a schema never reach the platform's RegExp: they run on re2js (linear time,
 * like `regexPattern`), at most `SCHEMA_PATTERN_PROGRAM_MAX` instructions each, and every match is
 * charged to the request's `CheckBudget`, so no schema and no value keep the service from answering.
 * Nothing is fetched: a `$ref` outside the schema is refused when it is compiled.
 */

import type Ajv2020 from 'ajv/dist/2020.js'
import type { ValidateFunction } from 'ajv/dist/2020.js'
import { BoundedMap } from './bounded-map.ts'
import type { JsonObject } from './flag.ts'
import { type CheckBudget, re2 } from './regex-pattern.ts'

/** The largest compiled program of a pattern inside a schema (RE2 instructions). */
export const SCHEMA_PATTERN_PROGRAM_MAX = 500
/** The largest schema, serialized. */
export const JSON_SCHEMA_MAX_BYTES = 64 * 1024

/** Thrown out of a pattern match when the budget is spent; the check is then refused. */
class BudgetSpent extends Error {}

// the budget of the check running now (checks are synchronous, so one at a time)
let current: CheckBudget | undefined

function re2Engine(pattern: string, flags: string) {
  const RE2JS = re2()
  const compiled = RE2JS.compile(pattern, flags.includes('i') ? RE2JS.CASE_INSENSITIVE : 0)
  const size = compiled.programSize()
  if (size > SCHEMA_PATTERN_PROGRAM_MAX)
    throw new Error(
      `pattern ${JSON.stringify(pattern.slice(0, 60))} is too large to check quickly (${size} instructions, at most ${SCHEMA_PATTERN_PROGRAM_MAX})`,
    )
  return {
    // ajv keeps one compiled pattern per toString(): it must name the pattern, as a RegExp's does
    toString: () => `/${pattern}/${flags}`,
    test(s: string) {
      if (current) {
        current.remaining -= size * (s.length + 1)
        if (current.remaining < 0) throw new BudgetSpent()
      }
      return compiled.matcher(s).find()
    },
  }
}
re2Engine.code = 'flagdRe2'

// ajv is loaded at the first schema compiled, not at start: most daemons hold no OBJECT flag with a
// schema, and loading it costs resident memory
let loaded: Ajv2020 | undefined
const ajv = () =>
  (loaded ??= new (require('ajv/dist/2020.js').default as typeof Ajv2020)({
    strict: false,
    validateFormats: false,
    allErrors: false,
    code: { regExp: re2Engine },
  }))
// a schema object is compiled once while it is held (stored flags never change in place)
const compiledByObject = new WeakMap<object, ValidateFunction>()
const compiledByText = new BoundedMap<string, ValidateFunction>(200)

/** Compiles `schema`, or says why it cannot be used. */
export function compileJsonSchema(schema: JsonObject): ValidateFunction | string {
  const known = compiledByObject.get(schema)
  if (known) return known
  const text = JSON.stringify(schema)
  if (Buffer.byteLength(text) > JSON_SCHEMA_MAX_BYTES) return `must be at most ${JSON_SCHEMA_MAX_BYTES} bytes of JSON`
  let compiled = compiledByText.get(text)
  if (!compiled) {
    try {
      // ajv keeps schemas with an $id; a copy without it keeps the instance free of them
      const { $id: _id, ...rest } = schema
      compiled = ajv().compile(rest)
    } catch (err) {
      return `is not a usable JSON Schema: ${(err as Error).message.slice(0, 200)}`
    }
    compiledByText.set(text, compiled)
  }
  compiledByObject.set(schema, compiled)
  return compiled
}

/** Why `value` does not satisfy `schema`, or `undefined` (a problem with the schema is reported elsewhere). */
export function jsonSchemaProblem(schema: JsonObject, value: unknown, budget: CheckBudget): string | undefined {
  const validate = compileJsonSchema(schema)
  if (typeof validate === 'string') return undefined
  current = budget
  try {
    if (validate(value)) return undefined
  } catch (err) {
    if (err instanceof BudgetSpent)
      return 'cannot be checked against jsonSchema quickly enough (its patterns are too costly for this value)'
    throw err
  } finally {
    current = undefined
  }
  const e = validate.errors?.[0]
  return e ? `does not satisfy jsonSchema: ${e.instancePath || '(the value)'} ${e.message ?? 'is invalid'}` : 'does not satisfy jsonSchema'
}
