/**
 * Validation of the targeting fields of a flag (docs/targeting.md#rules): `enabled`, `variants` (names,
 * at most 100, each value valid for the flag's type and constraints), `targeting` (size, depth,
 * operators, segments, variant names in result positions, all with their place in the rule),
 * `rollout` (docs/change-control.md#progressive-rollouts) and `metadata` (at most 50 keys, 4 KiB, strings, numbers or booleans). Part of `validateDefinition`.
 */

import type { FieldProblem } from './errors.ts'
import {
  builtInVariants,
  type FlagConstraints,
  type FlagType,
  type FlagValue,
  type JsonObject,
  type MetadataValue,
  type TargetingFields,
} from './flag.ts'
import { forbiddenKeys, isJsonObject } from './json-object.ts'
import { rolloutProblems } from './rollout.ts'
import { referencedSegments } from './segment.ts'
import { EXPANDED_RULE_MAX, expandedRuleSize } from './targeting/expanded-size.ts'
import { compileRule, compileRuleReferring } from './targeting/rule-compiler.ts'
import { ruleShapeProblems } from './targeting/targeting.ts'
import { VARIANT_NAME } from './variant-name.ts'

export const VARIANTS_MAX = 100
export const METADATA_KEYS_MAX = 50
export const METADATA_MAX_BYTES = 4096

/** What the targeting checks need from the rest of the validation. */
export interface TargetingCheck {
  type: FlagType
  constraints: FlagConstraints
  /** Whether values can be judged (an ENUM/TAG without valid enumValues cannot). */
  valuesCheckable: boolean
  valueProblem(v: unknown): string | undefined
  segments: ReadonlyMap<string, unknown>
}

const present = (o: Record<string, unknown>, k: string) => Object.hasOwn(o, k) && o[k] !== null && o[k] !== undefined

/** Checks the targeting fields of `input`, reporting problems through `problem`; returns the valid ones. */
export function checkTargetingFields(
  input: Record<string, unknown>,
  check: TargetingCheck,
  problem: (field: string, reason: string) => void,
): TargetingFields {
  const out: TargetingFields = {}
  if (present(input, 'enabled')) {
    if (typeof input.enabled !== 'boolean') problem('enabled', 'must be true or false')
    else out.enabled = input.enabled
  }
  if (present(input, 'variants')) {
    const variants = input.variants
    if (!isJsonObject(variants)) problem('variants', 'must be an object: variant name → value')
    else {
      const names = Object.keys(variants)
      if (names.length > VARIANTS_MAX) problem('variants', `must have at most ${VARIANTS_MAX} variants (has ${names.length})`)
      let ok = names.length <= VARIANTS_MAX
      for (const name of names) {
        if (!VARIANT_NAME.test(name)) {
          problem(`variants.${name}`, 'a variant name is 1 to 64 of A-Z a-z 0-9 . _ -')
          ok = false
          continue
        }
        if (!check.valuesCheckable) continue
        const why = check.valueProblem(variants[name])
        if (why) {
          problem(`variants.${name}`, why)
          ok = false
        }
      }
      if (ok) out.variants = { ...(variants as Record<string, FlagValue>) }
    }
  }
  if (present(input, 'targeting')) {
    const rule = input.targeting
    if (!isJsonObject(rule)) problem('targeting', 'must be a rule: a JSON object such as {"if": [...]}')
    else {
      const variantNames = new Set(Object.keys({ ...builtInVariants(check.type, check.constraints.enumValues), ...(out.variants ?? {}) }))
      const found = targetingProblems(rule, check.segments, variantNames)
      for (const p of found) problem(p.field, p.reason)
      if (found.length === 0) out.targeting = rule as JsonObject
    }
  }
  if (present(input, 'rollout')) {
    const variantNames = new Set(Object.keys({ ...builtInVariants(check.type, check.constraints.enumValues), ...(out.variants ?? {}) }))
    const { rollout, problems } = rolloutProblems(input.rollout, variantNames)
    for (const p of problems) problem(p.field, p.reason)
    if (rollout) out.rollout = rollout
  }
  if (present(input, 'metadata')) {
    const metadata = input.metadata
    if (!isJsonObject(metadata)) problem('metadata', 'must be an object of strings, numbers or booleans')
    else {
      const keys = Object.keys(metadata)
      let ok = true
      if (keys.length > METADATA_KEYS_MAX) {
        problem('metadata', `must have at most ${METADATA_KEYS_MAX} keys (has ${keys.length})`)
        ok = false
      }
      if (Buffer.byteLength(JSON.stringify(metadata)) > METADATA_MAX_BYTES) {
        problem('metadata', `must be at most ${METADATA_MAX_BYTES} bytes of JSON`)
        ok = false
      }
      for (const key of keys) {
        const v = metadata[key]
        if (!(typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)))) {
          problem(`metadata.${key}`, 'must be a string, a number or a boolean')
          ok = false
        }
      }
      if (ok && forbiddenKeys(metadata).length === 0) out.metadata = { ...(metadata as Record<string, MetadataValue>) }
    }
  }
  return out
}

/**
 * A rule found valid while rule checks are remembered (`rememberingRuleChecks`): the variant names
 * it was checked against, and the rule of each segment it referred to, directly or through others.
 */
interface ValidRule {
  variants: ReadonlySet<string>
  segments: ReadonlyMap<string, unknown>
}

/** The rules found valid while checks are remembered (see `rememberingRuleChecks`), by rule object. */
export type RuleChecks = WeakMap<object, ValidRule>

let validRules: RuleChecks | undefined

/**
 * Runs `work` remembering in `checks` which `targeting` rules were found valid, by the rule object: a
 * rule checked again with the same variant names and the same segment rules is not compiled again.
 * An import of another tool's file validates each translated flag, then the document made of them,
 * then each later step it schedules (docs/performance.md#imports); the objects are the import's own
 * (its rows frozen) and nothing changes them in between. What was found invalid is always checked
 * again, so every problem is reported as it would be.
 */
export function rememberingRuleChecks<T>(work: () => T, checks: RuleChecks = new WeakMap()): T {
  const outer = validRules
  validRules = checks
  try {
    return work()
  } finally {
    validRules = outer
  }
}

const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>) => a.size === b.size && [...a].every((x) => b.has(x))

/** The problems of `rule` as a flag's `targeting` (shape, then compiled against segments and variant names). */
function targetingProblems(rule: JsonObject, segments: ReadonlyMap<string, unknown>, variants: ReadonlySet<string>): FieldProblem[] {
  const known = validRules?.get(rule)
  if (known && sameSet(known.variants, variants) && [...known.segments].every(([name, r]) => segments.get(name) === r)) return []
  const shape = ruleShapeProblems(rule, 'targeting')
  if (shape.length > 0) return shape
  const { problems, referred } = compileRuleReferring(rule, { segments, variants })
  if (problems.length === 0 && validRules) {
    const used = new Map<string, unknown>()
    for (const name of referred) used.set(name, segments.get(name))
    validRules.set(rule, { variants, segments: used })
  }
  return problems
}

/** `name` and every segment that uses it, directly or through others. */
function segmentsUsing(name: string, rules: ReadonlyMap<string, unknown>): Set<string> {
  const out = new Set([name])
  for (let grew = true; grew; ) {
    grew = false
    for (const [other, rule] of rules)
      if (!out.has(other) && referencedSegments(rule).some((r) => out.has(r))) {
        out.add(other)
        grew = true
      }
  }
  return out
}

/**
 * Problems of segment `name`'s rule: as a flag's `targeting`, minus the variant check
 * (docs/targeting.md#rules); `segments` holds the others, and a reference back to `name` (directly or through others)
 * is a cycle.
 */
export function segmentRuleProblems(name: string, rule: unknown, segments: ReadonlyMap<string, unknown>, field = 'rule'): FieldProblem[] {
  if (!isJsonObject(rule)) return [{ field, reason: 'must be a rule: a JSON object such as {"in": [...]}' }]
  const shape = ruleShapeProblems(rule, field)
  if (shape.length > 0) return shape
  const withThis = new Map(segments)
  withThis.set(name, rule)
  const problems = compileRule(rule, { segments: withThis }, field, name).problems
  if (problems.length > 0) return problems
  // this segment, and every segment that uses it, must still fit in flagd's format written out
  const known = new Map<string, number>()
  for (const other of segmentsUsing(name, withThis)) {
    if (expandedRuleSize({ $ref: other }, withThis, known) <= EXPANDED_RULE_MAX) continue
    const whose = other === name ? 'this segment' : `segment ${other}, which uses this one,`
    problems.push({
      field,
      reason: `${whose} would be more than ${EXPANDED_RULE_MAX / 1024} KiB written out in flagd's format (a segment used by a segment is written out in full there); refer to fewer segments or simplify the rule`,
    })
  }
  return problems
}
