/**
 * One Unleash feature as a flag of a migration file (docs/migrations.md#from-unleash): without
 * variants a BOOLEAN answering what `isEnabled` answers; with variants a flag of their type
 * answering the variant `getVariant` serves, and no value (the application's default) where
 * Unleash serves its `disabled` variant. A feature off in the environment answers the same as
 * Unleash does for it: `false`, or no value.
 */

import { FLAG_KINDS } from '../flag-lifecycle.ts'
import type { UnleashFeature } from './unleash-export.ts'
import { type SegmentRef, strategyCondition } from './unleash-strategies.ts'
import { type VariantSet, variantChoice, variantSet } from './unleash-variants.ts'

/** A translated feature: its definition (prerequisites still to add), its variants, and whether it holds a percentage. */
export interface TranslatedFeature {
  definition: Record<string, unknown>
  variants: VariantSet | undefined
  split: boolean
  notes: string[]
}

const TAG_CHARS = /[^A-Za-z0-9._\-:/]/g

/** The flag of feature `f` (see module comment), or why it cannot be carried exactly. */
export function translateFeature(f: UnleashFeature, segment: SegmentRef): TranslatedFeature | { reason: string } {
  const strategyVariants = f.strategies.map((s) => s.variants)
  const hasVariants = f.variants.length > 0 || strategyVariants.some((v) => v.length > 0)
  const variants = hasVariants ? variantSet([f.variants, ...strategyVariants]) : undefined
  if (variants !== undefined && 'reason' in variants) return variants
  const notes: string[] = []
  let split = false
  let targeting: unknown
  const on = f.enabled
  if (!f.enabled && f.strategies.length > 0)
    notes.push('is off in the environment: imported answering as Unleash does, its strategies not carried')
  if (f.enabled && f.allStrategiesDisabled)
    notes.push('has only disabled strategies: Unleash serves it to everyone then, and so does the import')
  const featureChoice = variantChoice(f.variants, f.name, f.variants[0]?.stickiness)
  if ('reason' in featureChoice) return featureChoice
  if (on) {
    const branches: unknown[] = []
    for (const s of f.strategies) {
      const condition = strategyCondition(s, f.name, segment)
      if ('reason' in condition) return condition
      split ||= condition.split
      let answer: unknown = 'true'
      if (variants !== undefined) {
        const own =
          s.variants.length > 0
            ? variantChoice(s.variants, String(s.parameters.groupId), s.variants[0]?.stickiness || stickinessOf(s.parameters))
            : { rule: null }
        if ('reason' in own) return own
        const chosen = own.rule !== null ? own : featureChoice
        split ||= chosen.split === true
        answer = (chosen as { rule: unknown }).rule
      }
      if (condition.rule === false) continue
      branches.push(condition.rule, answer)
      if (condition.rule === true) break
    }
    if (f.strategies.length === 0) {
      branches.push(true, variants === undefined ? 'true' : featureChoice.rule)
      split ||= variants !== undefined && featureChoice.split === true
    }
    targeting = ruleOf(branches, variants === undefined)
  }
  const definition: Record<string, unknown> = { type: variants?.type ?? 'BOOLEAN', description: f.description.slice(0, 4096) }
  if (variants === undefined) Object.assign(definition, { defaultValue: false, value: false })
  else Object.assign(definition, { defaultValue: null, variants: variants.values })
  if (targeting !== undefined) definition.targeting = targeting
  if ((FLAG_KINDS as readonly string[]).includes(f.type)) definition.kind = f.type
  const tags = [...new Set(f.tags.map((t) => t.replace(TAG_CHARS, '_').slice(0, 64)))]
  if (tags.length > 20) notes.push(`has ${tags.length} tags: the first 20 kept`)
  if (tags.length > 0) definition.tags = tags.slice(0, 20)
  definition.metadata = {
    originalKey: f.name,
    importedFrom: 'unleash',
    ...(f.project !== undefined && f.project.length <= 100 ? { unleashProject: f.project } : {}),
  }
  return { definition, variants, split, notes }
}

function stickinessOf(parameters: Record<string, unknown>): string | undefined {
  return typeof parameters.stickiness === 'string' ? parameters.stickiness : undefined
}

/**
 * The `if` of condition/answer pairs, `false` (BOOLEAN) or no value (variants) when none holds;
 * `undefined` when that is the only answer. BOOLEAN branches that all answer `true` become one `or`.
 */
function ruleOf(branches: unknown[], boolean: boolean): unknown {
  if (branches.length === 0) return undefined
  const otherwise = boolean ? 'false' : null
  if (boolean) {
    const conditions = branches.filter((_, i) => i % 2 === 0)
    const any = conditions.includes(true) ? true : conditions.length === 1 ? conditions[0] : { or: conditions }
    return { if: [any, 'true', otherwise] }
  }
  return { if: [...branches, otherwise] }
}
