/**
 * The import from Unleash (docs/migrations.md#from-unleash): Unleash 5's export of one environment
 * translated into flags, segments and prerequisites of flagd, each feature either carried with its
 * meaning kept or skipped with the reason.
 */

import type { FieldProblem } from '../errors.ts'
import { validateDefinition } from '../flag-definition.ts'
import { segmentRuleProblems } from '../flag-targeting-fields.ts'
import { referencedSegments } from '../segment.ts'
import { VARIANT_NAME } from '../variant-name.ts'
import { foreignFlagNames } from './foreign-flag-name.ts'
import type { ForeignTranslation, Translator } from './foreign-translation.ts'
import { constraintRule } from './unleash-constraints.ts'
import { dependencyPrerequisites } from './unleash-dependencies.ts'
import { looksLikeUnleashExport, readUnleashExport, type UnleashExport } from './unleash-export.ts'
import { type TranslatedFeature, translateFeature } from './unleash-feature.ts'
import { allOf, type SegmentRef } from './unleash-strategies.ts'

/** True for Unleash's export (its `features` and `featureStrategies` lists), which no other format has. */
export function isUnleashFile(raw: unknown): boolean {
  return looksLikeUnleashExport(raw)
}

/** Names no JSON object of the daemon may hold as keys. */
const RESERVED = new Set(['__proto__', 'constructor', 'prototype'])

/** A flag above either of these is validated in full before it is carried (see definitionProblem). */
const VARIANTS_CHECKED = 20
const BYTES_CHECKED = 4_000

const PERCENTAGES: FieldProblem = {
  field: 'percentages',
  reason:
    'percentages keep their sizes but not their members: flagd buckets contexts by its own hash, so other users fall in each share than in Unleash; a context with neither user nor session id (which Unleash draws at random on each call, as it does for random stickiness) always falls in the same bucket',
}

/** Translates Unleash's export (see module comment). */
export const translateUnleash: Translator = (raw, options) => {
  const read = readUnleashExport(raw, options.sourceEnvironment)
  if ('problems' in read) return read
  const { names, skipped } = foreignFlagNames(read.features.map((f) => f.name))
  const segments = segmentTable(read)
  const translated = new Map<string, TranslatedFeature>()
  const warnings = [...read.warnings]
  for (const f of read.features) {
    const name = names.get(f.name)
    if (name === undefined) continue
    const t = translateFeature(f, segments.ref)
    if ('reason' in t) skipped.push({ name: f.name, reason: t.reason })
    else translated.set(f.name, t)
  }
  const byKey = new Map(read.features.map((f) => [f.name, f]))
  // a skipped parent skips its dependents, and theirs, until nothing more changes
  for (let changed = true; changed; ) {
    changed = false
    for (const [key, t] of translated) {
      const result = dependencyPrerequisites(byKey.get(key)?.dependencies ?? [], translated, names, byKey)
      if ('reason' in result) {
        translated.delete(key)
        skipped.push({ name: key, reason: result.reason })
        changed = true
      } else if (result.prerequisites.length > 0) t.definition.prerequisites = result.prerequisites
    }
  }
  const out: ForeignTranslation = {
    flags: {},
    segments: {},
    skipped,
    warnings,
    scheduled: [],
    ...(read.environment !== undefined ? { environment: read.environment } : {}),
  }
  const used = new Set<string>()
  const segmentRules = new Map(Object.entries(segments.rules).map(([n, s]) => [n, s.rule]))
  let split = false
  for (const [key, t] of translated) {
    const name = names.get(key) as string
    const problem = definitionProblem(t, segmentRules)
    if (problem !== undefined) {
      skipped.push({ name: key, reason: problem })
      continue
    }
    out.flags[name] = t.definition
    split ||= t.split
    for (const note of t.notes) warnings.push({ field: `flags.${name}`, reason: note })
    for (const ref of referencedSegments(t.definition.targeting ?? null)) used.add(ref)
  }
  for (const n of used) if (segments.rules[n] !== undefined) out.segments[n] = segments.rules[n]
  if (split) warnings.push(PERCENTAGES)
  return out
}

/**
 * Why a translated flag would not pass the daemon's validation, or `undefined`. Flags are built to
 * pass it (the tests check every one), so only a large flag, where a limit (rule size, variants,
 * values) can bite, is validated here; the import validates every flag again.
 */
function definitionProblem(t: TranslatedFeature, segments: ReadonlyMap<string, unknown>): string | undefined {
  const values = t.variants === undefined ? 0 : Object.keys(t.variants.values).length
  if (values <= VARIANTS_CHECKED && JSON.stringify(t.definition).length <= BYTES_CHECKED) return undefined
  const checked = validateDefinition(t.definition, { segments, ignoreFields: ['prerequisites'] })
  return checked.ok ? undefined : checked.problems.map((p) => `${p.field} ${p.reason}`).join('; ')
}

/** The file's segments as flagd segments, by a name made of theirs, and how strategies refer to them. */
function segmentTable(read: UnleashExport): { ref: SegmentRef; rules: Record<string, { description: string; rule: unknown }> } {
  const rules: Record<string, { description: string; rule: unknown }> = {}
  const byId = new Map<number, { rule: unknown } | { reason: string }>()
  const taken = new Set<string>()
  for (const s of read.segments.values()) {
    if (s.constraints === undefined) {
      byId.set(s.id, {
        reason: `segment ${s.name}: the file does not hold its constraints (Unleash's export names segments only): add them from Unleash's GET /api/admin/segments to the file's segments (docs/migrations.md#from-unleash)`,
      })
      continue
    }
    const parts: unknown[] = []
    let reason: string | undefined
    for (const c of s.constraints) {
      const t = constraintRule(c)
      if ('reason' in t) reason ??= `segment ${s.name}: ${t.reason}`
      else parts.push(t.rule)
    }
    if (reason !== undefined) {
      byId.set(s.id, { reason })
      continue
    }
    let name = s.name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64)
    if (!VARIANT_NAME.test(name) || taken.has(name) || RESERVED.has(name)) name = `${name.slice(0, 50)}_${s.id}`.replace(/^_+/, 'segment_')
    taken.add(name)
    const all = allOf(parts)
    const rule = typeof all === 'object' ? all : { and: [all] }
    const problems = segmentRuleProblems(name, rule, new Map())
    if (problems.length > 0) {
      byId.set(s.id, { reason: `segment ${s.name}: ${problems.map((p) => `${p.field} ${p.reason}`).join('; ')}` })
      continue
    }
    rules[name] = { description: `Unleash segment ${s.name}`, rule }
    byId.set(s.id, { rule: { $ref: name } })
  }
  // a segment the file does not have: Unleash's SDKs then never enable the strategy
  return { rules, ref: (id) => byId.get(id) ?? { rule: false } }
}
