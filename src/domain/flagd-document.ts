/**
 * OpenFeature flagd's flag-definition document, both ways (docs/targeting.md#flagd-format).
 *
 * Out: each flag as `state`, `variants` (built-in ones written out, plus `default` when no variant
 * holds the flag's default answer), `defaultVariant`, `targeting` and `metadata` (the flag's own,
 * with `type` and `revision` as OFREP reports them), segments as `$evaluators` with references to
 * other segments expanded (flagd does not nest `$ref`). Two answers are made to read the same in
 * flagd as over OFREP: a flag without a value is answered `DEFAULT` here, so it gets the rule
 * `{"if": [true, null]}` (null: serve the default, as `DEFAULT`); an unpinned A/B test gets its
 * split as `{"fractional": [["A", 100000 − w], ["B", w]]}`. TAG flags (lists) have no flagd type and
 * are left out, named in the document's metadata.
 *
 * In: a document is flagd's when it has `flags` whose members have `state` or `variants` and none
 * of the migration file's own fields. Types come from the variants, `defaultVariant`'s value
 * becomes the value, a missing or null `defaultVariant` means no default, `DISABLED` means
 * `enabled: false`, `$evaluators` become segments, negative fractional weights are clamped to 0
 * (as flagd does) with a warning.
 */

import { answerVariant } from './answer-variant.ts'
import type { FieldProblem } from './errors.ts'
import { allVariants, FLAG_TYPES, type Flag, type FlagType, type FlagValue, isEnabled, type JsonObject, zeroValue } from './flag.ts'
import { isFlagKind, lifecycleMetadata, TAGS_MAX, tagProblem } from './flag-lifecycle.ts'
import { isJsonObject } from './json-object.ts'
import { type PrerequisiteScope, withPrerequisites } from './prerequisite-rule.ts'
import { rolloutRule, servedRollout } from './rollout.ts'
import type { Segment } from './segment.ts'
import { EXPANDED_RULE_MAX, expandedRuleSize } from './targeting/expanded-size.ts'
import { clampFractionalWeights } from './targeting/targeting.ts'

export const FLAGD_SCHEMA = 'https://flagd.dev/schema/v0/flags.json'

/** A flag in a flagd document. */
export interface FlagdFlag {
  state: 'ENABLED' | 'DISABLED'
  variants: Record<string, FlagValue>
  defaultVariant?: string | null
  targeting?: JsonObject
  metadata?: Record<string, string | number | boolean>
}

/** A flagd document. */
export interface FlagdDocument {
  $schema: string
  flags: Record<string, FlagdFlag>
  $evaluators?: Record<string, JsonObject>
  metadata: Record<string, string | number | boolean>
}

/**
 * The rule with every `$ref` replaced by the segment's rule (expanded in turn). Each segment is
 * expanded once and shared (`expanded`), and writes keep the written-out size bounded
 * (`EXPANDED_RULE_MAX`); a reference in a cycle or to no segment stays as it is.
 */
export function expandRefs(
  rule: unknown,
  segments: ReadonlyMap<string, unknown>,
  expanded = new Map<string, unknown>(),
  open: string[] = [],
): unknown {
  if (rule === null || typeof rule !== 'object') return rule
  if (Array.isArray(rule)) return rule.map((r) => expandRefs(r, segments, expanded, open))
  const keys = Object.keys(rule)
  const ref = (rule as { $ref?: unknown }).$ref
  if (keys.length === 1 && typeof ref === 'string') {
    const target = segments.get(ref)
    if (target === undefined || open.includes(ref)) return rule
    if (!expanded.has(ref)) {
      open.push(ref)
      expanded.set(ref, expandRefs(target, segments, expanded, open))
      open.pop()
    }
    return expanded.get(ref)
  }
  return Object.fromEntries(Object.entries(rule).map(([k, v]) => [k, expandRefs(v, segments, expanded, open)]))
}

/** A segment's rule with references to other segments expanded, so it stands alone as an evaluator. */
function evaluatorOf(segment: Segment, segments: ReadonlyMap<string, unknown>, expanded: Map<string, unknown>): JsonObject {
  return expandRefs(segment.rule, segments, expanded, [segment.name]) as JsonObject
}

/**
 * One flag in flagd's terms, or `undefined` when flagd cannot express it (TAG). Its prerequisites
 * are compiled into its rule with `scope` (docs/targeting.md#prerequisites-in-flagd-format).
 */
export function toFlagdFlag(flag: Flag, scope?: PrerequisiteScope): FlagdFlag | undefined {
  if (flag.type === 'TAG') return undefined
  const variants: Record<string, FlagValue> = { ...allVariants(flag) }
  // the answer's variant is named as OFREP names it (one name on every path)
  const answer = answerVariant(flag)
  const defaultVariant = answer?.variant ?? null
  if (answer && !Object.hasOwn(variants, answer.variant)) variants[answer.variant] = answer.value
  // flagd wants at least one variant: a flag with none and no default gets its type's zero, unused
  if (Object.keys(variants).length === 0) variants.default = zeroValue(flag.type, flag.enumValues)
  let targeting = flag.targeting
  if (!targeting && flag.type === 'AB-TEST' && !flag.valueExists) {
    const w = Math.round((flag.chancePercentB ?? 50) * 1000)
    targeting = {
      fractional: [
        ['A', 100_000 - w],
        ['B', w],
      ],
    }
  } else if (!targeting && !flag.valueExists) targeting = { if: [true, null] } // answered DEFAULT, as over OFREP
  // a rollout goes in front, in flagd's own rule language: providers move with it on their own
  const rollout = flag.rollout && servedRollout(flag.rollout)
  if (rollout) targeting = rolloutRule(rollout, targeting)
  const out: FlagdFlag = {
    state: isEnabled(flag) ? 'ENABLED' : 'DISABLED',
    variants,
    defaultVariant,
    ...(targeting ? { targeting } : {}),
    metadata: { ...(flag.metadata ?? {}), ...lifecycleMetadata(flag), type: flag.type, revision: flag.servedRevision ?? flag.revision },
  }
  if (flag.prerequisites === undefined || scope === undefined) return out
  // while a prerequisite does not hold: the default answer, an unpinned A/B test's split included
  const unmet = flag.type === 'AB-TEST' && !flag.valueExists ? abSplit(flag) : null
  const compiled = withPrerequisites(flag, out, unmet, scope)
  const { targeting: _own, ...rest } = out
  return compiled === undefined ? rest : { ...rest, targeting: compiled }
}

/** An unpinned A/B test's split by `chancePercentB`, in flagd's rule language. */
function abSplit(flag: Flag): JsonObject {
  const w = Math.round((flag.chancePercentB ?? 50) * 1000)
  return {
    fractional: [
      ['A', 100_000 - w],
      ['B', w],
    ],
  }
}

/** The scope compiling prerequisites needs, over `flags` by name and the segments' `rules`; each flag compiled once. */
export function prerequisiteScope(flags: ReadonlyMap<string, Flag>, rules: ReadonlyMap<string, unknown>): PrerequisiteScope {
  const compiled = new Map<string, FlagdFlag | undefined>()
  const expanded = new Map<string, unknown>()
  const scope: PrerequisiteScope = {
    flag: (name) => flags.get(name),
    flagdOf(name) {
      if (compiled.has(name)) return compiled.get(name)
      compiled.set(name, undefined) // a cycle (refused at write) reads as no flag
      const flag = flags.get(name)
      const made = flag === undefined ? undefined : toFlagdFlag(flag, scope)
      compiled.set(name, made)
      return made
    },
    expand: (rule) => expandRefs(rule, rules, expanded),
  }
  return scope
}

/**
 * Takes kind, owner and tags out of a flagd flag's `metadata` into `input`'s fields, where they are
 * what this export writes (a kind's name, an owner string, tags joined with `,`); others stay metadata.
 */
function lifecycleFromMetadata(metadata: Record<string, unknown>, input: Record<string, unknown>): void {
  if (isFlagKind(metadata.kind)) {
    input.kind = metadata.kind
    delete metadata.kind
  }
  if (typeof metadata.owner === 'string') {
    input.owner = metadata.owner
    delete metadata.owner
  }
  if (typeof metadata.tags === 'string') {
    const tags = metadata.tags === '' ? [] : metadata.tags.split(',')
    if (tags.length <= TAGS_MAX && tags.every((t) => tagProblem(t) === undefined)) {
      input.tags = tags
      delete metadata.tags
    }
  }
}

/** The flagd document of `flags` (in name order) and `segments`. */
export function buildFlagdDocument(flags: readonly Flag[], segments: readonly Segment[], environment: string): FlagdDocument {
  const out: Record<string, FlagdFlag> = {}
  const omitted: string[] = []
  const rules = new Map(segments.map((s) => [s.name, s.rule as unknown]))
  const scope = flags.some((f) => f.prerequisites !== undefined)
    ? prerequisiteScope(new Map(flags.map((f) => [f.name, f])), rules)
    : undefined
  for (const flag of flags) {
    const f = scope?.flagdOf(flag.name) ?? toFlagdFlag(flag)
    if (f) out[flag.name] = f
    else omitted.push(flag.name)
  }
  const expanded = new Map<string, unknown>()
  const sizes = new Map<string, number>()
  // writes refuse segments too large written out; one stored before that rule is left out, named
  const tooLarge = segments.filter((s) => expandedRuleSize({ $ref: s.name }, rules, sizes) > EXPANDED_RULE_MAX).map((s) => s.name)
  const evaluators = Object.fromEntries(
    segments.filter((s) => !tooLarge.includes(s.name)).map((s) => [s.name, evaluatorOf(s, rules, expanded)]),
  )
  return {
    $schema: FLAGD_SCHEMA,
    flags: out,
    ...(segments.length > 0 ? { $evaluators: evaluators } : {}),
    metadata: {
      environment,
      ...(omitted.length > 0 ? { omittedFlags: `TAG flags have no flagd type: ${omitted.join(', ')}` } : {}),
      ...(tooLarge.length > 0
        ? { omittedSegments: `larger than ${EXPANDED_RULE_MAX / 1024} KiB written out: ${tooLarge.join(', ')}` }
        : {}),
    },
  }
}

const MIGRATION_FIELDS = ['environment', 'version', 'createdAt']

/** True when `raw` is a flagd document rather than a migration file (see module comment). */
export function isFlagdDocument(raw: Record<string, unknown>): boolean {
  if (MIGRATION_FIELDS.some((k) => Object.hasOwn(raw, k)) || !isJsonObject(raw.flags)) return false
  if (Object.hasOwn(raw, '$evaluators') || Object.hasOwn(raw, '$schema')) return true
  const first = Object.values(raw.flags)[0]
  return isJsonObject(first) && (Object.hasOwn(first, 'state') || Object.hasOwn(first, 'variants'))
}

/** The flag type of a set of variant values, or why there is none. */
function typeOf(values: unknown[]): FlagType | string {
  if (values.length === 0) return 'has no variants'
  if (values.every((v) => typeof v === 'boolean')) return 'BOOLEAN'
  if (values.every((v) => typeof v === 'number')) return values.every((v) => Number.isSafeInteger(v)) ? 'INTEGER' : 'NUMBER'
  if (values.every((v) => typeof v === 'string')) return 'STRING'
  if (values.every((v) => isJsonObject(v))) return 'OBJECT'
  return 'mixes variant types (booleans, numbers, strings and objects cannot share a flag)'
}

/** A flagd flag as the raw input `validateDefinition` takes (problems and warnings reported through the callbacks). */
export function fromFlagdFlag(
  raw: Record<string, unknown>,
  problem: (field: string, reason: string) => void,
  warning: (field: string, reason: string) => void,
): Record<string, unknown> | undefined {
  const variants = raw.variants
  if (!isJsonObject(variants)) {
    problem('variants', 'a flagd flag needs variants (an object: name → value)')
    return undefined
  }
  const type = typeOf(Object.values(variants))
  if (!['BOOLEAN', 'INTEGER', 'NUMBER', 'STRING', 'OBJECT'].includes(type)) {
    problem('variants', type)
    return undefined
  }
  if (raw.state !== 'ENABLED' && raw.state !== 'DISABLED') problem('state', 'must be ENABLED or DISABLED')
  const input: Record<string, unknown> = { type, variants, enabled: raw.state !== 'DISABLED' }
  const dv = raw.defaultVariant
  if (dv === null || dv === undefined) {
    input.defaultValue = null // no default: the application's own applies
    input.valueExists = false
  } else if (typeof dv !== 'string' || !Object.hasOwn(variants, dv))
    problem('defaultVariant', `${JSON.stringify(dv)} is not one of the variants`)
  else {
    input.value = variants[dv]
    input.valueExists = true
    // a BOOLEAN's `true`/`false` are built in: listed beside another variant naming the answer (as
    // this export writes them), they would take its name, which must stay `defaultVariant`'s
    // (docs/openfeature.md#variant-names)
    if (type === 'BOOLEAN' && dv !== 'true' && dv !== 'false')
      input.variants = Object.fromEntries(Object.entries(variants).filter(([name, value]) => String(value) !== name))
  }
  if (raw.targeting !== undefined && !(isJsonObject(raw.targeting) && Object.keys(raw.targeting).length === 0)) {
    const { rule, clamped, emptied } = clampFractionalWeights(raw.targeting)
    for (const at of clamped) warning(at, 'a negative fractional weight, read as 0 (as flagd does)')
    for (const at of emptied)
      warning(at, 'a split whose weights are all 0 serves the default (as flagd does); imported as {"if": [true, null]}')
    input.targeting = rule
  }
  if (isJsonObject(raw.metadata)) {
    const kept: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(raw.metadata)) {
      // what the export adds to every flag's metadata, as OFREP does (docs/migrations.md#flagd-round-trip)
      if ((k === 'type' && (FLAG_TYPES as readonly unknown[]).includes(v)) || (k === 'revision' && Number.isSafeInteger(v))) continue
      if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) kept[k] = v
      else warning(`metadata.${k}`, 'not a string, number or boolean; dropped')
    }
    lifecycleFromMetadata(kept, input)
    if (Object.keys(kept).length > 0) input.metadata = kept
  }
  for (const key of Object.keys(raw))
    if (!['state', 'variants', 'defaultVariant', 'targeting', 'metadata'].includes(key)) warning(key, 'not a field of flagd flags; dropped')
  return input
}

/**
 * The document-level warnings of a flagd document (what flagd keeps that flagd-the-service does
 * not): unknown top-level fields, and each key of the document's `metadata` but `environment` (read
 * as the source's environment). flagd reports a document's metadata (`flagSetId`, `version`) with
 * every flag of it; here a flag carries only its own, so each such key is named as dropped.
 */
export function flagdDocumentWarnings(raw: Record<string, unknown>): FieldProblem[] {
  const out = Object.keys(raw)
    .filter((k) => !['flags', '$evaluators', '$schema', 'metadata'].includes(k))
    .map((field) => ({ field, reason: 'not part of a flagd document; dropped' }))
  if (isJsonObject(raw.metadata))
    for (const key of Object.keys(raw.metadata))
      if (key !== 'environment')
        out.push({
          field: `metadata.${key}`,
          reason: "document metadata is not kept (flags here carry only their own metadata); put it in each flag's metadata to keep it",
        })
  return out
}
