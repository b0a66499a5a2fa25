/**
 * The one validator of flag definitions, used by the API (create and update), the importer and the
 * offline `validate` command. It reports every problem at once, each with the field's name and a
 * reason a person understands (`11 is above maxValue 10`), and returns the definition normalised:
 * zero default filled in, `chancePercentB` defaulted, absent constraints left out.
 */

import { codePointCount } from './code-points.ts'
import type { FieldProblem } from './errors.ts'
import {
  COMMON_FIELDS,
  CONSTRAINT_FIELDS,
  definitionOf,
  FLAG_TYPES,
  type FlagConstraints,
  type FlagDefinition,
  type FlagType,
  isFlagType,
  type JsonObject,
  LIFECYCLE_FIELDS,
  TARGETING_FIELDS,
  TYPE_CONSTRAINTS,
  zeroValue,
} from './flag.ts'
import { checkLifecycleFields } from './flag-lifecycle.ts'
import { checkTargetingFields } from './flag-targeting-fields.ts'
import { forbiddenKeys, isJsonObject } from './json-object.ts'
import { compileJsonSchema, jsonSchemaProblem } from './json-schema.ts'
import { checkPrerequisites } from './prerequisite.ts'
import { type CheckBudget, compilePattern, newCheckBudget, PATTERN_MAX, patternMatches } from './regex-pattern.ts'
import { closestSpelling, unknownFieldReason } from './spelling-suggestion.ts'

export const STRING_VALUE_MAX = 65_536
export const DESCRIPTION_MAX = 4_096
export const ENUM_VALUES_MAX = 1_000
export const ENUM_VALUE_LENGTH_MAX = 1_000
/** The largest OBJECT value, serialized. */
export const OBJECT_VALUE_MAX_BYTES = 64 * 1024

/** Options of `validateDefinition`. */
export interface ValidateOptions {
  /** Prepended to every field name (`flags.app/x.` in import documents). */
  prefix?: string
  /** Fields the caller handles itself; not reported as unknown. */
  ignoreFields?: readonly string[]
  /** Import files may carry a `value` beside `valueExists: false`; it is then ignored. */
  valueBesideFalse?: 'error' | 'ignore'
  /** What pattern checks may spend; shared by every flag of one document (default: a fresh one). */
  budget?: CheckBudget
  /** Segment rules by name, for `$ref` in `targeting` (default: none). */
  segments?: ReadonlyMap<string, unknown>
}

/** The result: a normalised definition, or every problem found. */
export type ValidationResult = { ok: true; definition: FlagDefinition } | { ok: false; problems: FieldProblem[] }

const show = (v: unknown) => {
  const text = JSON.stringify(v) ?? String(v)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}
const has = (o: Record<string, unknown>, k: string) => Object.hasOwn(o, k) && o[k] !== null && o[k] !== undefined
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v)
/** Why `v` is not a valid value of a flag with these constraints, or `undefined`. */
export function valueProblem(type: FlagType, v: unknown, c: FlagConstraints, budget: CheckBudget = newCheckBudget()): string | undefined {
  switch (type) {
    case 'BOOLEAN':
      return typeof v === 'boolean' ? undefined : 'must be true or false'
    case 'INTEGER':
      if (!isInt(v)) return 'must be an integer (a safe integer)'
      if (c.minValue !== undefined && v < c.minValue) return `${v} is below minValue ${c.minValue}`
      if (c.maxValue !== undefined && v > c.maxValue) return `${v} is above maxValue ${c.maxValue}`
      return undefined
    case 'STRING': {
      if (typeof v !== 'string') return 'must be a string'
      const n = codePointCount(v, STRING_VALUE_MAX)
      if (n > STRING_VALUE_MAX) return `must be at most ${STRING_VALUE_MAX} characters`
      if (c.maxLength !== undefined && n > c.maxLength) return `is ${n} characters, above maxLength ${c.maxLength}`
      if (c.regexPattern !== undefined) {
        const re = compilePattern(c.regexPattern, budget)
        if (typeof re === 'string') return undefined // the pattern itself is reported
        const matched = patternMatches(re, v, budget)
        if (typeof matched === 'string') return matched
        if (!matched) return `${show(v)} does not match regexPattern ${show(c.regexPattern)}`
      }
      return undefined
    }
    case 'ENUM':
      if (typeof v !== 'string') return 'must be a string'
      return c.enumValues?.includes(v) ? undefined : `${show(v)} is not one of enumValues`
    case 'TAG': {
      if (!Array.isArray(v)) return 'must be an array of strings'
      const seen = new Set<string>()
      for (const tag of v) {
        if (typeof tag !== 'string') return 'must be an array of strings'
        if (seen.has(tag)) return `repeats ${show(tag)}`
        seen.add(tag)
        if (!c.enumValues?.includes(tag)) return `${show(tag)} is not one of enumValues`
      }
      if (c.minCount !== undefined && v.length < c.minCount) return `has ${v.length} tags, below minCount ${c.minCount}`
      if (c.maxCount !== undefined && v.length > c.maxCount) return `has ${v.length} tags, above maxCount ${c.maxCount}`
      return undefined
    }
    case 'AB-TEST':
      return v === 'A' || v === 'B' ? undefined : 'must be "A" or "B"'
    case 'NUMBER':
      if (typeof v !== 'number' || !Number.isFinite(v)) return 'must be a finite number'
      if (c.minValue !== undefined && v < c.minValue) return `${v} is below minValue ${c.minValue}`
      if (c.maxValue !== undefined && v > c.maxValue) return `${v} is above maxValue ${c.maxValue}`
      return undefined
    case 'OBJECT': {
      if (!isJsonObject(v)) return 'must be a JSON object'
      if (Buffer.byteLength(JSON.stringify(v)) > OBJECT_VALUE_MAX_BYTES) return `must be at most ${OBJECT_VALUE_MAX_BYTES} bytes of JSON`
      const forbidden = forbiddenKeys(v)
      if (forbidden.length > 0) return `may not hold the key at ${forbidden[0]}`
      return c.jsonSchema ? jsonSchemaProblem(c.jsonSchema, v, budget) : undefined
    }
  }
}

function enumValuesProblem(v: unknown): string | undefined {
  if (!Array.isArray(v)) return 'must be an array of strings'
  if (v.length === 0 || v.length > ENUM_VALUES_MAX) return `must have 1 to ${ENUM_VALUES_MAX} values`
  const seen = new Set<string>()
  for (const item of v) {
    if (typeof item !== 'string') return 'must be an array of strings'
    if (item.length === 0) return 'must not contain an empty string'
    if (codePointCount(item, ENUM_VALUE_LENGTH_MAX) > ENUM_VALUE_LENGTH_MAX)
      return `values must be at most ${ENUM_VALUE_LENGTH_MAX} characters`
    if (seen.has(item)) return `repeats ${show(item)}`
    seen.add(item)
  }
  return undefined
}

/** Checks the constraint fields of a type; fills `out` with the valid ones. */
function checkConstraints(
  type: FlagType,
  input: Record<string, unknown>,
  out: FlagConstraints,
  budget: CheckBudget,
  problem: (f: string, r: string) => void,
): void {
  const allowed = TYPE_CONSTRAINTS[type]
  for (const key of allowed) {
    if (!has(input, key)) continue
    const v = input[key]
    switch (key) {
      case 'minValue':
      case 'maxValue':
        if (type === 'NUMBER') typeof v === 'number' && Number.isFinite(v) ? (out[key] = v) : problem(key, 'must be a finite number')
        else isInt(v) ? (out[key] = v) : problem(key, 'must be an integer (a safe integer)')
        break
      case 'jsonSchema': {
        if (!isJsonObject(v)) problem(key, 'must be a JSON Schema (a JSON object)')
        else if (forbiddenKeys(v).length > 0) problem(key, `may not hold the key at ${forbiddenKeys(v)[0]}`)
        else {
          const compiled = compileJsonSchema(v)
          typeof compiled === 'string' ? problem(key, compiled) : (out.jsonSchema = v as JsonObject)
        }
        break
      }
      case 'maxLength':
        isInt(v) && v >= 1 ? (out.maxLength = v) : problem(key, 'must be an integer of at least 1')
        break
      case 'minCount':
      case 'maxCount':
        isInt(v) && v >= 0 ? (out[key] = v) : problem(key, 'must be an integer of at least 0')
        break
      case 'chancePercentB':
        typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 100
          ? (out.chancePercentB = v)
          : problem(key, 'must be a number from 0 to 100')
        break
      case 'regexPattern': {
        if (typeof v !== 'string') problem(key, 'must be a string')
        else if (codePointCount(v, PATTERN_MAX) > PATTERN_MAX) problem(key, `must be at most ${PATTERN_MAX} characters`)
        else {
          const re = compilePattern(v, budget)
          typeof re === 'string' ? problem(key, re) : (out.regexPattern = v)
        }
        break
      }
      case 'enumValues': {
        const why = enumValuesProblem(v)
        why ? problem(key, why) : (out.enumValues = [...(v as string[])])
        break
      }
    }
  }
  if (out.minValue !== undefined && out.maxValue !== undefined && out.minValue > out.maxValue) {
    problem('minValue', `${out.minValue} is above maxValue ${out.maxValue}`)
  }
  if ((type === 'ENUM' || type === 'TAG') && !has(input, 'enumValues')) problem('enumValues', `is required for ${type} flags`)
  if (type === 'TAG' && out.enumValues) {
    const n = out.enumValues.length
    if (out.minCount !== undefined && out.maxCount !== undefined && out.minCount > out.maxCount)
      problem('minCount', `${out.minCount} is above maxCount ${out.maxCount}`)
    if (out.maxCount !== undefined && out.maxCount > n) problem('maxCount', `${out.maxCount} is above the number of enumValues (${n})`)
    if (out.minCount !== undefined && out.minCount > n) problem('minCount', `${out.minCount} is above the number of enumValues (${n})`)
  }
  if (type === 'AB-TEST' && out.chancePercentB === undefined && !has(input, 'chancePercentB')) out.chancePercentB = 50
}

/** Validates one flag definition (see module comment). */
export function validateDefinition(input: Record<string, unknown>, options: ValidateOptions = {}): ValidationResult {
  const prefix = options.prefix ?? ''
  const problems: FieldProblem[] = []
  const problem = (field: string, reason: string) => problems.push({ field: `${prefix}${field}`, reason })
  const type = input.type
  if (!has(input, 'type')) {
    // a misspelt type ({"tpye": …}) is named with the field it meant
    const typo = Object.keys(input).find((key) => closestSpelling(key, ['type']) === 'type')
    problem(typo ?? 'type', typo === undefined ? 'required' : unknownFieldReason(typo, ['type']))
  } else if (!isFlagType(type)) problem('type', `must be one of ${FLAG_TYPES.join(', ')}`)
  if (problems.length > 0) return { ok: false, problems }
  const flagType = type as FlagType

  const known = new Set<string>([
    ...COMMON_FIELDS,
    ...TYPE_CONSTRAINTS[flagType],
    ...TARGETING_FIELDS,
    ...LIFECYCLE_FIELDS,
    ...(options.ignoreFields ?? []),
  ])
  for (const key of Object.keys(input)) {
    if (known.has(key)) continue
    problem(
      key,
      (CONSTRAINT_FIELDS as readonly string[]).includes(key) ? `is not a field of ${flagType} flags` : unknownFieldReason(key, known),
    )
  }
  let description = ''
  if (has(input, 'description')) {
    const d = input.description
    if (typeof d !== 'string') problem('description', 'must be a string')
    else if (codePointCount(d, DESCRIPTION_MAX) > DESCRIPTION_MAX) problem('description', `must be at most ${DESCRIPTION_MAX} characters`)
    else description = d
  }
  const constraints: FlagConstraints = {}
  const budget = options.budget ?? newCheckBudget()
  checkConstraints(flagType, input, constraints, budget, problem)
  // Values are checked against the constraints that are valid; without valid enumValues an ENUM or
  // TAG value cannot be judged, so it is not (the enumValues problem is reported instead).
  const valuesCheckable = (flagType !== 'ENUM' && flagType !== 'TAG') || constraints.enumValues !== undefined

  if (has(input, 'valueExists') && typeof input.valueExists !== 'boolean') problem('valueExists', 'must be true or false')
  let valueExists = input.valueExists === true
  let value: unknown
  if (has(input, 'value')) {
    if (input.valueExists === false) {
      if (options.valueBesideFalse !== 'ignore') problem('valueExists', 'is false but a value is given; omit value or set valueExists true')
    } else {
      value = input.value
      valueExists = true
    }
  } else if (input.valueExists === true) problem('value', 'is required when valueExists is true')

  // an explicit null: no default, the application's own applies (docs/targeting.md#flagd-format)
  const noDefault = Object.hasOwn(input, 'defaultValue') && input.defaultValue === null
  const definition: FlagDefinition = {
    type: flagType,
    description,
    defaultValue: noDefault
      ? null
      : has(input, 'defaultValue')
        ? (input.defaultValue as FlagDefinition['defaultValue'])
        : zeroValue(flagType, constraints.enumValues),
    valueExists,
    ...constraints,
  }
  const targeting = checkTargetingFields(
    input,
    {
      type: flagType,
      constraints,
      valuesCheckable,
      valueProblem: (v) => valueProblem(flagType, v, constraints, budget),
      segments: options.segments ?? new Map(),
    },
    problem,
  )
  Object.assign(definition, targeting)
  checkLifecycleFields(input, definition, problem)
  checkPrerequisites(input, definition, problem)
  if (valuesCheckable && definition.defaultValue !== null) {
    const why = valueProblem(flagType, definition.defaultValue, constraints, budget)
    if (why)
      problem(
        'defaultValue',
        has(input, 'defaultValue') ? why : `defaults to ${show(definition.defaultValue)}, which breaks the constraints: ${why}`,
      )
  }
  if (valuesCheckable && valueExists && value !== undefined) {
    const whyValue = valueProblem(flagType, value, constraints, budget)
    if (whyValue) problem('value', whyValue)
  }
  if (problems.length > 0) return { ok: false, problems }
  if (valueExists) definition.value = value as FlagDefinition['value']
  return { ok: true, definition: definitionOf(definition) }
}
