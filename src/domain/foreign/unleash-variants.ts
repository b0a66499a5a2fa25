/**
 * Unleash's variants as flagd variants (docs/migrations.md#from-unleash): a variant of the same name
 * whose value is its payload (`json` → an object, `number` → a number, `string` and `csv` → text) or
 * its name when it has none; the weighted choice as a `fractional` split with the same weights,
 * bucketed by the field of the variants' stickiness, legacy overrides tested first.
 */

import { forbiddenKeys } from '../json-object.ts'
import { VARIANT_NAME } from '../variant-name.ts'
import { contextVar, type Translated } from './unleash-constraints.ts'
import type { UnleashVariant } from './unleash-export.ts'

/** The type and values of a flag's variants. */
export interface VariantSet {
  type: 'STRING' | 'NUMBER' | 'OBJECT'
  values: Record<string, unknown>
}

/** Keys no JSON object of the daemon may hold (docs/api.md). */
const RESERVED = new Set(['__proto__', 'constructor', 'prototype'])

type Typed = { type: VariantSet['type']; value: unknown } | { reason: string }

function variantValue(v: UnleashVariant): Typed {
  const p = v.payload
  if (p === undefined) return { type: 'STRING', value: v.name }
  switch (p.type) {
    case 'string':
    case 'csv':
      return { type: 'STRING', value: p.value }
    case 'number': {
      const n = p.value.trim() === '' ? Number.NaN : Number(p.value)
      return Number.isFinite(n)
        ? { type: 'NUMBER', value: n }
        : { reason: `variant ${v.name}: its number payload ${p.value} is not a number` }
    }
    case 'json': {
      let parsed: unknown
      try {
        parsed = JSON.parse(p.value)
      } catch {
        return { reason: `variant ${v.name}: its json payload is not valid JSON` }
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        return { reason: `variant ${v.name}: its json payload is not a JSON object, which an OBJECT flag needs` }
      const reserved = forbiddenKeys(parsed)[0]
      if (reserved !== undefined) return { reason: `variant ${v.name}: its json payload holds the reserved key ${reserved}` }
      return { type: 'OBJECT', value: parsed }
    }
    default:
      return { reason: `variant ${v.name}: payload type ${p.type} is not one of Unleash's` }
  }
}

/** The variants of every list (the feature's, each strategy's) as one set, or why they cannot be one flag's. */
export function variantSet(lists: readonly UnleashVariant[][]): VariantSet | { reason: string } {
  let type: VariantSet['type'] | undefined
  const values: Record<string, unknown> = {}
  for (const v of lists.flat()) {
    if (!VARIANT_NAME.test(v.name)) return { reason: `variant name ${JSON.stringify(v.name)} is not 1-64 of A-Z a-z 0-9 . _ -` }
    if (RESERVED.has(v.name)) return { reason: `variant name ${v.name} is reserved in JSON documents` }
    const typed = variantValue(v)
    if ('reason' in typed) return typed
    if (type !== undefined && typed.type !== type)
      return { reason: `its variants' values are of different types (${type} and ${typed.type}), which one flag cannot hold` }
    type = typed.type
    if (Object.hasOwn(values, v.name) && JSON.stringify(values[v.name]) !== JSON.stringify(typed.value))
      return { reason: `variant ${v.name} has different payloads in different strategies` }
    values[v.name] = typed.value
  }
  return { type: type ?? 'STRING', values }
}

/**
 * The bucket key of Unleash's stickiness: `default` (and `random`, which Unleash draws anew on each
 * call) the first of the user id, session id and, for variants, remote address that is given; any
 * other the named field. Prefixed by the group, as Unleash hashes `group:id`, so flags of one
 * group keep sharing their buckets; a variant's key ends in `:variant`, as Unleash hashes variants
 * with a seed of their own, so which variant a context gets does not follow whether a rollout let
 * it in.
 */
export function bucketKey(group: string, stickiness: string | undefined, forVariants: boolean): { rule: unknown } | { reason: string } {
  const tail = forVariants ? [':variant'] : []
  if (stickiness === undefined || stickiness === '' || stickiness === 'default' || stickiness === 'random') {
    const fields = forVariants ? ['targetingKey', 'sessionId', 'remoteAddress'] : ['targetingKey', 'sessionId']
    return { rule: { cat: [group, ':', { or: [...fields.map((f) => ({ var: f })), ''] }, ...tail] } }
  }
  const v = contextVar(stickiness)
  return 'reason' in v ? { reason: `stickiness ${stickiness}: ${v.reason}` } : { rule: { cat: [group, ':', v, ...tail] } }
}

/**
 * The rule choosing among `variants` as Unleash does (overrides, then the weighted split), with
 * `split` true when it is a percentage; `{rule: null}` when they weigh nothing (Unleash then serves
 * no variant).
 */
export function variantChoice(
  variants: readonly UnleashVariant[],
  group: string,
  stickiness: string | undefined,
): Translated & { split?: boolean } {
  if (variants.some((v) => !Number.isInteger(v.weight) || v.weight < 0))
    return { reason: 'a variant weight is not a whole number of at least 0' }
  const weighed = variants.filter((v) => v.weight > 0)
  if (weighed.length === 0) return { rule: null }
  let choice: unknown = weighed[0]?.name
  const split = weighed.length > 1
  if (split) {
    const key = bucketKey(group, stickiness, true)
    if ('reason' in key) return key
    choice = { fractional: [key.rule, ...weighed.map((v) => [v.name, v.weight])] }
  }
  const overrides: unknown[] = []
  for (const v of variants) {
    const tests: unknown[] = []
    for (const o of v.overrides ?? []) {
      const field = contextVar(o.contextName)
      if ('reason' in field) return { reason: `override of variant ${v.name}: ${field.reason}` }
      tests.push({ in: [field, o.values] })
    }
    if (tests.length > 0) overrides.push(tests.length === 1 ? tests[0] : { or: tests }, v.name)
  }
  return { rule: overrides.length > 0 ? { if: [...overrides, choice] } : choice, split }
}
