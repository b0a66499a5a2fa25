/**
 * Rewrites JSON Schema as emitted by TypeBox and Elysia into the OpenAPI 3.0 dialect: `const` →
 * `enum`, unions of literals → one `enum`, Elysia's numeric-string coercion branches dropped,
 * `null` unions → `nullable`, `patternProperties` (t.Record) → `additionalProperties`, numeric
 * `exclusiveMinimum` → boolean form, `examples` → `example`, integers given their int64 format and
 * safe bounds. The input is not modified.
 */

import { isJsonObject as isObject } from '../domain/json-object.ts'

type Json = Record<string, unknown>

/** True for Elysia's `t.Integer`/`t.Numeric`/`t.BooleanString` string branch, which only exists for query coercion. */
const isCoercionBranch = (s: unknown) =>
  isObject(s) && s.type === 'string' && (s.format === 'integer' || s.format === 'numeric' || s.format === 'boolean')

function mergeEnumUnion(branches: Json[]): Json | undefined {
  if (!branches.every((b) => 'const' in b || Array.isArray(b.enum))) return undefined
  const types = new Set(branches.map((b) => b.type ?? typeof (b.const ?? (b.enum as unknown[])[0])))
  if (types.size !== 1) return undefined
  const values = branches.flatMap((b) => ('const' in b ? [b.const] : (b.enum as unknown[])))
  return { type: [...types][0], enum: values }
}

/** Converts one schema (recursively) to OpenAPI 3.0. */
export function toOpenApi30(input: unknown): unknown {
  if (Array.isArray(input)) return input.map(toOpenApi30)
  if (!isObject(input)) return input
  let s: Json = { ...input }
  delete s.$id
  if ('const' in s) {
    s.enum = [s.const]
    delete s.const
  }
  if (Array.isArray(s.examples)) {
    if (s.example === undefined && s.examples.length > 0) s.example = s.examples[0]
    delete s.examples
  }
  if (Array.isArray(s.type)) {
    const types = s.type.filter((t) => t !== 'null')
    if (types.length < s.type.length) s.nullable = true
    s.type = types[0]
  }
  for (const key of ['exclusiveMinimum', 'exclusiveMaximum'] as const) {
    if (typeof s[key] === 'number') {
      s[key === 'exclusiveMinimum' ? 'minimum' : 'maximum'] = s[key]
      s[key] = true
    }
  }
  if (isObject(s.patternProperties)) {
    const [first] = Object.values(s.patternProperties)
    s.additionalProperties = first ?? true
    delete s.patternProperties
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const list = s[key]
    if (!Array.isArray(list)) continue
    let branches = (list as unknown[]).filter((b) => !isCoercionBranch(b)) as Json[]
    const withoutNull = branches.filter((b) => b.type !== 'null')
    const nullable = withoutNull.length < branches.length
    branches = withoutNull
    const merged = mergeEnumUnion(branches)
    delete s[key]
    if (merged) s = { ...s, ...merged }
    else if (branches.length === 1) s = { ...s, ...(branches[0] as Json) }
    else s[key] = branches
    if (nullable) s.nullable = true
  }
  // Every integer flagd handles is a safe integer: say so (format and bounds), as generators and
  // linters expect.
  if (s.type === 'integer') {
    s.format ??= 'int64'
    s.minimum ??= Number.MIN_SAFE_INTEGER
    s.maximum ??= Number.MAX_SAFE_INTEGER
  }
  for (const key of ['properties', 'definitions'] as const) {
    if (isObject(s[key])) s[key] = Object.fromEntries(Object.entries(s[key] as Json).map(([k, v]) => [k, toOpenApi30(v)]))
  }
  for (const key of ['items', 'additionalProperties', 'not', 'allOf', 'anyOf', 'oneOf'] as const) {
    if (s[key] !== undefined && typeof s[key] !== 'boolean') s[key] = toOpenApi30(s[key])
  }
  if (s.format === 'integer' && s.type === 'integer') delete s.format
  if (s.type === 'integer' && s.default === 0 && input.default === undefined) delete s.default
  return s
}
