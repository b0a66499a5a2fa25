/**
 * A Flipt flag's rules in flagd's rule language (docs/migrations.md#from-flipt). VARIANT flags: the
 * first rule whose segments match decides (its distributions split the entity ids; none: no
 * variant); BOOLEAN flags: the first rollout that holds decides (a segment rollout when its segments
 * match, a threshold for its share of entity ids, else the next rollout), then the flag's `enabled`.
 */

import { isJsonObject } from '../json-object.ts'

/** A rule's result, or the reason the flag cannot be translated. */
export type Translated<T> = { ok: true; value: T } | { ok: false; reason: string }

/** The segments a rule or rollout names (`segment: key`, `segment: {key|keys, operator}`, older `segments` + `operator`) and how they join. */
export function segmentCondition(
  rule: Record<string, unknown>,
  known: ReadonlySet<string>,
  refused: ReadonlyMap<string, string>,
): Translated<unknown> {
  let keys: unknown[] = []
  let operator: unknown = rule.operator
  const s = rule.segment
  if (typeof s === 'string') keys = [s]
  else if (isJsonObject(s)) {
    keys = Array.isArray(s.keys) && s.keys.length > 0 ? s.keys : typeof s.key === 'string' ? [s.key] : []
    operator = s.operator ?? operator
  }
  if (Array.isArray(rule.segments) && rule.segments.length > 0) keys = rule.segments
  if (keys.length === 0) return { ok: false, reason: 'names no segment' }
  for (const key of keys) {
    if (typeof key !== 'string' || !known.has(key))
      return { ok: false, reason: `refers to segment ${String(key)}, which the file does not hold` }
    const why = refused.get(key)
    if (why !== undefined) return { ok: false, reason: why }
  }
  if (operator !== undefined && operator !== 'OR_SEGMENT_OPERATOR' && operator !== 'AND_SEGMENT_OPERATOR')
    return { ok: false, reason: `segment operator ${String(operator)} is not one Flipt has` }
  const refs = keys.map((key) => ({ $ref: key }))
  return { ok: true, value: refs.length === 1 ? refs[0] : { [operator === 'AND_SEGMENT_OPERATOR' ? 'and' : 'or']: refs } }
}

/** Flipt's share of a distribution, in thousandths, as it counts it (a float32 percentage times ten, cut to an integer). */
export function thousandths(rollout: number): number {
  return Math.trunc(Math.fround(Math.fround(rollout) * 10))
}

/** What a VARIANT rule answers: a variant name, `null` (no variant: the flag's default), or a `fractional` split. */
export function distributionResult(
  rule: Record<string, unknown>,
  variants: ReadonlySet<string>,
  at: string,
): Translated<{ result: unknown; split: boolean }> {
  const list = Array.isArray(rule.distributions) ? rule.distributions : []
  const buckets: Array<[string, number]> = []
  for (const d of list) {
    if (!isJsonObject(d) || typeof d.variant !== 'string') return { ok: false, reason: `${at}: a distribution without a variant` }
    const rollout = typeof d.rollout === 'number' ? d.rollout : 0
    if (rollout <= 0) continue
    if (!variants.has(d.variant)) return { ok: false, reason: `${at}: distribution to ${d.variant}, which is no variant of the flag` }
    buckets.push([d.variant, thousandths(rollout)])
  }
  if (buckets.length === 0) return { ok: true, value: { result: null, split: false } }
  const total = buckets.reduce((sum, [, w]) => sum + w, 0)
  if (total > 1000) return { ok: false, reason: `${at}: distributions add up to more than 100 %` }
  if (total < 1000)
    return {
      ok: false,
      reason: `${at}: distributions add up to ${total / 10} %, and Flipt gives the rest no variant at all, which a flagd split cannot hold`,
    }
  const kept = buckets.filter(([, w]) => w > 0)
  if (kept.length === 1) return { ok: true, value: { result: (kept[0] as [string, number])[0], split: false } }
  return { ok: true, value: { result: { fractional: kept }, split: true } }
}

/** The number of Flipt's hundred buckets (0 to 99) a threshold of `percentage` takes: those below it. */
export function thresholdBuckets(percentage: number): number {
  return Math.min(100, Math.max(0, Math.ceil(Math.fround(percentage))))
}
