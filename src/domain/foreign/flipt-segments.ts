/**
 * Flipt's segments in flagd's rule language (docs/migrations.md#from-flipt): a segment's constraints
 * joined by its `match_type` (ALL: every one, ANY: one at least, none: everyone), each constraint
 * kept exactly as Flipt evaluates it on a context whose attribute has the constraint's type (text,
 * number, boolean), or the segment refused with the reason: Flipt trims spaces from the context's
 * text before `empty`, `notempty`, `prefix` and `suffix`, which flagd's rules cannot do, and reads
 * dates given as text, which flagd's rules cannot compare.
 */

import { isJsonObject } from '../json-object.ts'
import { VARIANT_NAME } from '../variant-name.ts'

/** A segment translated (`rule`), or why it cannot be. */
export type FliptSegment = { ok: true; description: string; rule: Record<string, unknown> } | { ok: false; reason: string }

const ALWAYS = { '!': [false] }

/** The value a constraint reads: the entity id (`targetingKey`) or the context attribute it names. */
function subject(c: Record<string, unknown>): unknown {
  return c.type === 'ENTITY_ID_COMPARISON_TYPE' ? { var: 'targetingKey' } : { var: String(c.property ?? '') }
}

/** A JSON list in a constraint's `value` (`isoneof`), of the type `kind`, or `undefined`. */
function listOf(value: unknown, kind: 'string' | 'number'): unknown[] | undefined {
  if (typeof value !== 'string') return undefined
  try {
    const list = JSON.parse(value) as unknown
    return Array.isArray(list) && list.every((v) => typeof v === kind) ? list : undefined
  } catch {
    return undefined
  }
}

/** One text constraint (`STRING` or `ENTITY_ID`): Flipt never matches an empty text except by `empty`. */
function textRule(c: Record<string, unknown>, v: unknown): unknown {
  const value = typeof c.value === 'string' ? c.value : ''
  const filled = { '!!': [v] }
  switch (c.operator) {
    case 'eq':
      return value === '' ? { '!': [true] } : { '===': [v, value] }
    case 'neq':
      return { and: [filled, { '!==': [v, value] }] }
    case 'isoneof':
    case 'isnotoneof': {
      const list = listOf(c.value, 'string')?.filter((s) => s !== '')
      if (list === undefined) return `its value is not a JSON list of texts`
      return c.operator === 'isoneof' ? { in: [v, list] } : { and: [filled, { '!': [{ in: [v, list] }] }] }
    }
    case 'empty':
    case 'notempty':
    case 'prefix':
    case 'suffix':
      return `Flipt trims spaces from the context's text before ${c.operator}, which flagd's rules cannot do`
    default:
      return `operator ${String(c.operator)} is not one Flipt has for text`
  }
}

/** One number constraint: an absent attribute matches only `notpresent`. */
function numberRule(c: Record<string, unknown>, v: unknown): unknown {
  const present = { '!=': [v, null] }
  if (c.operator === 'present') return present
  if (c.operator === 'notpresent') return { '==': [v, null] }
  if (c.operator === 'isoneof' || c.operator === 'isnotoneof') {
    const list = listOf(c.value, 'number')
    if (list === undefined) return 'its value is not a JSON list of numbers'
    return c.operator === 'isoneof' ? { in: [v, list] } : { and: [present, { '!': [{ in: [v, list] }] }] }
  }
  const n = typeof c.value === 'string' && c.value.trim() !== '' ? Number(c.value) : Number.NaN
  if (!Number.isFinite(n)) return `its value ${JSON.stringify(c.value)} is not a number (Flipt fails every evaluation of it)`
  const ops: Record<string, string> = { eq: '===', neq: '!==', lt: '<', lte: '<=', gt: '>', gte: '>=' }
  const op = ops[String(c.operator)]
  if (op === undefined) return `operator ${String(c.operator)} is not one Flipt has for numbers`
  return op === '===' ? { '===': [v, n] } : { and: [present, { [op]: [v, n] }] }
}

/** One boolean constraint. */
function booleanRule(c: Record<string, unknown>, v: unknown): unknown {
  switch (c.operator) {
    case 'true':
      return { '===': [v, true] }
    case 'false':
      return { '===': [v, false] }
    case 'present':
      return { '!=': [v, null] }
    case 'notpresent':
      return { '==': [v, null] }
    default:
      return `operator ${String(c.operator)} is not one Flipt has for booleans`
  }
}

/** One constraint as a rule, or the reason it cannot be one (a string). */
function constraintRule(c: Record<string, unknown>): unknown {
  const v = subject(c)
  switch (c.type) {
    case 'STRING_COMPARISON_TYPE':
    case 'ENTITY_ID_COMPARISON_TYPE':
      return textRule(c, v)
    case 'NUMBER_COMPARISON_TYPE':
      return numberRule(c, v)
    case 'BOOLEAN_COMPARISON_TYPE':
      return booleanRule(c, v)
    case 'DATETIME_COMPARISON_TYPE':
      return "it compares dates given as text in the context, which flagd's rules cannot compare for every context"
    default:
      return `type ${String(c.type)} is not a constraint type Flipt has`
  }
}

/** Translates one segment of a Flipt file (see module comment). */
export function translateFliptSegment(segment: Record<string, unknown>): FliptSegment {
  const key = String(segment.key ?? '')
  if (!VARIANT_NAME.test(key)) return { ok: false, reason: `segment ${JSON.stringify(key)}: a key flagd cannot name a segment with` }
  const constraints = Array.isArray(segment.constraints) ? segment.constraints : []
  const rules: unknown[] = []
  for (const [i, c] of constraints.entries()) {
    if (!isJsonObject(c)) return { ok: false, reason: `segment ${key}, constraint ${i + 1}: not an object` }
    const rule = constraintRule(c)
    if (typeof rule === 'string')
      return {
        ok: false,
        reason: `segment ${key}, constraint ${i + 1} (${String(c.type)} ${String(c.property ?? '')} ${String(c.operator)}): ${rule}`,
      }
    rules.push(rule)
  }
  const any = segment.match_type === 'ANY_MATCH_TYPE'
  if (!any && segment.match_type !== undefined && segment.match_type !== 'ALL_MATCH_TYPE')
    return { ok: false, reason: `segment ${key}: match_type ${String(segment.match_type)} is not one Flipt has` }
  const rule = rules.length === 0 ? ALWAYS : rules.length === 1 ? (rules[0] as Record<string, unknown>) : { [any ? 'or' : 'and']: rules }
  const description =
    typeof segment.description === 'string' && segment.description !== '' ? segment.description : String(segment.name ?? '')
  return { ok: true, description, rule }
}
