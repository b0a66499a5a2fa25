/**
 * One Flipt flag as a flagd flag (docs/migrations.md#from-flipt). A VARIANT flag: its variants
 * (value: the attachment, else the variant's key; all of one type), its default variant as the
 * default (none: the application's own), its rules as the rule, and disabled when Flipt disables it
 * (Flipt then answers no variant: the application's default). A BOOLEAN flag: always on, `enabled`
 * its value, its rollouts the rule.
 */

import { isJsonObject } from '../json-object.ts'
import { distributionResult, segmentCondition, thresholdBuckets } from './flipt-rules.ts'

/** A translated flag: its definition, whether it splits by percentage, the segments it uses; or why not. */
export type FliptFlag =
  | { ok: true; definition: Record<string, unknown>; split: boolean; segments: string[] }
  | { ok: false; reason: string }

/** The flag's own metadata kept (scalar values only), with where it came from. */
function metadataOf(flag: Record<string, unknown>): Record<string, unknown> {
  const meta: Record<string, unknown> = {}
  if (isJsonObject(flag.metadata))
    for (const [k, v] of Object.entries(flag.metadata)) if (['string', 'number', 'boolean'].includes(typeof v)) meta[k] = v
  if (typeof flag.name === 'string' && flag.name !== '' && flag.name !== flag.key) meta.name = flag.name
  return { ...meta, originalKey: flag.key, importedFrom: 'flipt' }
}

const description = (flag: Record<string, unknown>) => (typeof flag.description === 'string' ? flag.description : '')

/** The segments a rule names (for the list of segments used). */
function segmentsOf(rule: Record<string, unknown>): string[] {
  const s = rule.segment
  const keys = typeof s === 'string' ? [s] : isJsonObject(s) ? (Array.isArray(s.keys) ? s.keys : [s.key]) : []
  return [...keys, ...(Array.isArray(rule.segments) ? rule.segments : [])].filter((k): k is string => typeof k === 'string')
}

/** The flagd type of the variants' values, or why they have none. */
function typeOf(values: unknown[]): string | { reason: string } {
  if (values.length === 0 || values.every((v) => typeof v === 'string')) return 'STRING'
  if (values.every((v) => isJsonObject(v))) return 'OBJECT'
  if (values.every((v) => typeof v === 'number')) return 'NUMBER'
  if (values.every((v) => typeof v === 'boolean')) return 'BOOLEAN'
  return { reason: 'its variants mix attachments of different kinds (or attachments and none): a flagd flag holds values of one type' }
}

/** Translates a VARIANT flag (see module comment). */
export function translateFliptVariant(
  flag: Record<string, unknown>,
  known: ReadonlySet<string>,
  refused: ReadonlyMap<string, string>,
): FliptFlag {
  const list = (Array.isArray(flag.variants) ? flag.variants : []).filter(isJsonObject)
  const variants: Record<string, unknown> = {}
  for (const v of list) {
    if (typeof v.key !== 'string') return { ok: false, reason: 'a variant without a key' }
    const attached = v.attachment !== undefined && v.attachment !== null && v.attachment !== ''
    variants[v.key] = attached ? v.attachment : v.key
  }
  const type = typeOf(Object.values(variants))
  if (typeof type !== 'string') return { ok: false, reason: type.reason }
  const defaultKey =
    typeof flag.default_variant === 'string' ? flag.default_variant : (list.find((v) => v.default === true)?.key as string | undefined)
  if (defaultKey !== undefined && !Object.hasOwn(variants, defaultKey))
    return { ok: false, reason: `its default variant ${defaultKey} is not one of its variants` }
  const names = new Set(Object.keys(variants))
  const branches: unknown[] = []
  let split = false
  const used: string[] = []
  for (const [i, rule] of (Array.isArray(flag.rules) ? flag.rules : []).entries()) {
    const at = `rule ${i + 1}`
    if (!isJsonObject(rule)) return { ok: false, reason: `${at}: not an object` }
    const condition = segmentCondition(rule, known, refused)
    if (!condition.ok) return { ok: false, reason: `${at}: ${condition.reason}` }
    const answer = distributionResult(rule, names, at)
    if (!answer.ok) return { ok: false, reason: answer.reason }
    // no variant from a matching rule is the application's default: flagd's null serves the flag's default
    if (answer.value.result === null && defaultKey !== undefined)
      return {
        ok: false,
        reason: `${at} has no distribution: Flipt then answers no variant (the application's default), which flagd cannot give beside the default variant ${defaultKey}`,
      }
    split ||= answer.value.split
    used.push(...segmentsOf(rule))
    branches.push(condition.value, answer.value.result)
  }
  const definition: Record<string, unknown> = {
    type,
    description: description(flag),
    defaultValue: defaultKey === undefined ? null : variants[defaultKey],
    valueExists: false,
    enabled: flag.enabled === true,
    metadata: metadataOf(flag),
  }
  if (Object.keys(variants).length > 0) definition.variants = variants
  if (branches.length > 0) definition.targeting = { if: [...branches, null] }
  return { ok: true, definition, split, segments: used }
}

/** Translates a BOOLEAN flag (see module comment). */
export function translateFliptBoolean(
  flag: Record<string, unknown>,
  known: ReadonlySet<string>,
  refused: ReadonlyMap<string, string>,
): FliptFlag {
  const enabled = flag.enabled === true
  const branches: unknown[] = []
  let split = false
  const used: string[] = []
  for (const [i, rollout] of (Array.isArray(flag.rollouts) ? flag.rollouts : []).entries()) {
    const at = `rollout ${i + 1}`
    if (!isJsonObject(rollout)) return { ok: false, reason: `${at}: not an object` }
    if (isJsonObject(rollout.threshold)) {
      const { percentage, value } = rollout.threshold
      const buckets = thresholdBuckets(typeof percentage === 'number' ? percentage : 0)
      const answer = String(value === true)
      if (buckets === 0) continue
      if (buckets === 100) {
        branches.push({ '!': [false] }, answer)
        break
      }
      split = true
      // in the share: this rollout's value; outside it: the rollouts after it decide
      branches.push(
        {
          '===': [
            {
              fractional: [
                ['true', buckets],
                ['false', 100 - buckets],
              ],
            },
            'true',
          ],
        },
        answer,
      )
    } else if (rollout.segment !== undefined) {
      const condition = segmentCondition({ segment: rollout.segment }, known, refused)
      if (!condition.ok) return { ok: false, reason: `${at}: ${condition.reason}` }
      const value = isJsonObject(rollout.segment) && rollout.segment.value === true
      used.push(...segmentsOf({ segment: rollout.segment }))
      branches.push(condition.value, String(value))
    } else return { ok: false, reason: `${at}: neither a threshold nor a segment` }
  }
  const definition: Record<string, unknown> = {
    type: 'BOOLEAN',
    description: description(flag),
    defaultValue: enabled,
    valueExists: true,
    value: enabled,
    enabled: true,
    metadata: metadataOf(flag),
  }
  if (branches.length > 0) definition.targeting = { if: [...branches, null] }
  return { ok: true, definition, split, segments: used }
}
