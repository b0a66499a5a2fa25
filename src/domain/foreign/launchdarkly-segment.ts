/**
 * LaunchDarkly's segments as segments of flagd (docs/migrations.md#from-launchdarkly): a context
 * is in one when its key is included, else when its key is not excluded and one of its rules
 * matches (a rule with a `weight` only for that share of the contexts it matches, split as a
 * rollout is). Big (unbounded) segments and contexts of other kinds are not carried: the segment is
 * skipped, and so is every flag that uses it.
 */

import { VARIANT_NAME } from '../variant-name.ts'
import { attributePath, clausesCondition, type SegmentNames, Unkept } from './launchdarkly-clause.ts'

/** LaunchDarkly's weights are per 100,000. */
const TOTAL = 100_000

/** A segment translated: its rule, or the reason it is not carried. */
export type LdSegmentResult = { rule: unknown; description: string } | { reason: string }

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The keys of a segment's user targets: `included`/`excluded` and the user entries of `includedContexts`/`excludedContexts`. */
function keysOf(plain: unknown, contexts: unknown, what: string): string[] {
  const keys = (Array.isArray(plain) ? plain : []).filter((k) => typeof k === 'string')
  for (const t of Array.isArray(contexts) ? contexts : []) {
    if (!isObject(t) || !Array.isArray(t.values)) continue
    if (t.contextKind !== undefined && t.contextKind !== null && t.contextKind !== 'user') {
      if (t.values.length > 0) throw new Unkept(`${what} contexts of kind ${JSON.stringify(t.contextKind)} (multi-context)`)
      continue
    }
    keys.push(...t.values.filter((k) => typeof k === 'string'))
  }
  return keys
}

const andList = (c: unknown): unknown[] => (isObject(c) && Array.isArray(c.and) ? c.and : [c])

/**
 * The share of a segment rule's matches that are in the segment: `true` for all (no weight),
 * `false` for none, else a split by the segment's key and the bucketing attribute keeping the
 * weight per 100,000 (a context without the attribute takes LaunchDarkly's bucket 0: in).
 */
function sampled(key: string, rule: Record<string, unknown>): unknown {
  const weight = rule.weight
  if (weight === undefined || weight === null) return true
  if (typeof weight !== 'number' || !Number.isInteger(weight))
    throw new Unkept(`a weight that is not a whole number of 1/100,000 (${JSON.stringify(weight)})`)
  if (weight <= 0) return false
  if (weight >= TOTAL) return true
  if (rule.rolloutContextKind !== undefined && rule.rolloutContextKind !== null && rule.rolloutContextKind !== 'user')
    throw new Unkept(
      `a percentage of contexts of kind ${JSON.stringify(rule.rolloutContextKind)} (multi-context): flagd's contexts have no kinds`,
    )
  const by = { var: attributePath(typeof rule.bucketBy === 'string' ? rule.bucketBy : 'key', rule.rolloutContextKind) }
  return { or: [{ '===': [by, null] }, { fractional: [{ cat: [`${key}.`, by] }, [true, weight], [false, TOTAL - weight]] }] }
}

/** True when a segment's rule takes a percentage of the contexts it matches. */
export function isSampledSegment(segment: Record<string, unknown>): boolean {
  return (Array.isArray(segment.rules) ? segment.rules : []).some(
    (r) => isObject(r) && typeof r.weight === 'number' && r.weight > 0 && r.weight < TOTAL,
  )
}

function segmentRule(key: string, s: Record<string, unknown>, names: SegmentNames): unknown {
  if (s.unbounded === true) throw new Unkept('a big segment (unbounded): its members are not in the file')
  const included = keysOf(s.included, s.includedContexts, 'it includes')
  const excluded = keysOf(s.excluded, s.excludedContexts, 'it excludes')
  const rules = (Array.isArray(s.rules) ? s.rules : []).flatMap((r, i) => {
    const rule = isObject(r) ? r : {}
    try {
      const matched = clausesCondition(rule.clauses, (k) => (k === key ? undefined : names(k)))
      const share = sampled(key, rule)
      if (share === false) return []
      return share === true ? [matched] : [{ and: [...(matched === true ? [] : andList(matched)), share] }]
    } catch (e) {
      throw e instanceof Unkept ? new Unkept(`its rule ${i + 1}: ${e.message}`) : e
    }
  })
  const key_ = { var: 'targetingKey' }
  const byRules = rules.length === 0 ? false : rules.length === 1 ? rules[0] : { or: rules }
  const notExcluded = excluded.length === 0 ? byRules : { and: [{ '!': { in: [key_, excluded] } }, byRules] }
  const parts = [...(included.length > 0 ? [{ in: [key_, included] }] : []), ...(notExcluded === false ? [] : [notExcluded])]
  // a segment that can match nothing still needs a rule: one that is always false
  if (parts.length === 0) return { '!': true }
  return parts.length === 1 ? parts[0] : { or: parts }
}

/**
 * The segments of a file translated, by LaunchDarkly key (those with no valid name are not
 * carried). A segment using a segment that is not carried is not carried either.
 */
export function translateLdSegments(segments: Map<string, Record<string, unknown>>): Map<string, LdSegmentResult> {
  const out = new Map<string, LdSegmentResult>()
  const resolving = new Set<string>()
  const names: SegmentNames = (key) => {
    const s = segments.get(key)
    if (s === undefined) return null
    if (!VARIANT_NAME.test(key) || resolving.has(key)) return undefined
    return 'rule' in resolve(key, s) ? key : undefined
  }
  const resolve = (key: string, s: Record<string, unknown>): LdSegmentResult => {
    const known = out.get(key)
    if (known !== undefined) return known
    resolving.add(key)
    let result: LdSegmentResult
    try {
      if (!VARIANT_NAME.test(key)) throw new Unkept('its key cannot be a segment name (1-64 of A-Z a-z 0-9 . _ -)')
      const description =
        typeof s.description === 'string' && s.description !== ''
          ? s.description
          : typeof s.name === 'string'
            ? s.name
            : `LaunchDarkly segment ${key}`
      result = { rule: segmentRule(key, s, names), description }
    } catch (e) {
      if (!(e instanceof Unkept)) throw e
      result = { reason: e.message }
    }
    resolving.delete(key)
    out.set(key, result)
    return result
  }
  for (const [key, s] of segments) resolve(key, s)
  return out
}
