/**
 * What Flipt answers for a flag of its export, written from Flipt's documented evaluation (and read
 * against its evaluator's source): the test's judge of the Flipt import. A split is answered as the
 * variants it may give (which entity ids fall where is Flipt's hash, not kept by the import).
 */

type Obj = Record<string, unknown>

/** Flipt's answer: a value, no value (the application's default), or one of a split's values. */
export type FliptAnswer = { value: unknown } | { none: true } | { oneOf: unknown[] }

/** Flipt's context is text: a number or boolean is read as its text, an absent one as empty. */
function text(v: unknown): string {
  return v === undefined || v === null ? '' : String(v)
}

function matchesConstraint(c: Obj, context: Obj): boolean {
  const v = c.type === 'ENTITY_ID_COMPARISON_TYPE' ? text(context.targetingKey) : text(context[String(c.property)])
  const value = String(c.value ?? '')
  const op = c.operator
  if (c.type === 'STRING_COMPARISON_TYPE' || c.type === 'ENTITY_ID_COMPARISON_TYPE') {
    if (op === 'empty') return v.trim() === ''
    if (op === 'notempty') return v.trim() !== ''
    if (v === '') return false
    if (op === 'eq') return v === value
    if (op === 'neq') return v !== value
    if (op === 'prefix') return v.trim().startsWith(value)
    if (op === 'suffix') return v.trim().endsWith(value)
    if (op === 'isoneof') return (JSON.parse(value) as string[]).includes(v)
    if (op === 'isnotoneof') return !(JSON.parse(value) as string[]).includes(v)
    return false
  }
  if (op === 'present') return v.trim() !== ''
  if (op === 'notpresent') return v.trim() === ''
  if (v === '') return false
  if (c.type === 'NUMBER_COMPARISON_TYPE') {
    const n = Number(v)
    if (op === 'isoneof') return (JSON.parse(value) as number[]).includes(n)
    if (op === 'isnotoneof') return !(JSON.parse(value) as number[]).includes(n)
    const w = Number(value)
    return { eq: n === w, neq: n !== w, lt: n < w, lte: n <= w, gt: n > w, gte: n >= w }[String(op)] ?? false
  }
  if (c.type === 'BOOLEAN_COMPARISON_TYPE') return op === 'true' ? v === 'true' : op === 'false' ? v === 'false' : false
  throw new Error(`the oracle does not judge ${String(c.type)}`)
}

function matchesSegment(segment: Obj, context: Obj): boolean {
  const constraints = (segment.constraints as Obj[] | undefined) ?? []
  const hits = constraints.filter((c) => matchesConstraint(c, context)).length
  return segment.match_type === 'ANY_MATCH_TYPE' ? constraints.length === 0 || hits > 0 : hits === constraints.length
}

function matchesRule(rule: Obj, segments: Map<string, Obj>, context: Obj): boolean {
  const s = rule.segment
  const keys = typeof s === 'string' ? [s] : (((s as Obj).keys as string[] | undefined) ?? [(s as Obj).key as string])
  const operator = typeof s === 'string' ? 'OR_SEGMENT_OPERATOR' : ((s as Obj).operator ?? 'OR_SEGMENT_OPERATOR')
  const hits = keys.filter((k) => matchesSegment(segments.get(k) as Obj, context)).length
  return operator === 'AND_SEGMENT_OPERATOR' ? hits === keys.length : hits > 0
}

/** Flipt's answer for `flag` of the export `doc` and `context` (see module comment). */
export function fliptAnswer(doc: Obj, flag: Obj, context: Obj): FliptAnswer {
  const segments = new Map(((doc.segments as Obj[]) ?? []).map((s) => [s.key as string, s]))
  if (flag.type === 'BOOLEAN_FLAG_TYPE') {
    for (const rollout of (flag.rollouts as Obj[] | undefined) ?? []) {
      const t = rollout.threshold as Obj | undefined
      if (t) {
        const p = Number(t.percentage ?? 0)
        if (p >= 100) return { value: t.value === true }
        if (p > 0) return { oneOf: [t.value === true, ...rest(doc, flag, rollout, context)] }
      } else if (matchesRule({ segment: rollout.segment }, segments, context)) return { value: (rollout.segment as Obj).value === true }
    }
    return { value: flag.enabled === true }
  }
  if (flag.enabled !== true) return { none: true }
  const variants = new Map(((flag.variants as Obj[]) ?? []).map((v) => [v.key as string, v.attachment ?? v.key]))
  for (const rule of (flag.rules as Obj[] | undefined) ?? []) {
    if (!matchesRule(rule, segments, context)) continue
    const shares = ((rule.distributions as Obj[] | undefined) ?? []).filter((d) => Number(d.rollout) > 0)
    if (shares.length === 0) return { none: true }
    if (shares.length === 1) return { value: variants.get(shares[0]?.variant as string) }
    return { oneOf: shares.map((d) => variants.get(d.variant as string)) }
  }
  const fallback = ((flag.variants as Obj[]) ?? []).find((v) => v.default === true)
  return fallback ? { value: variants.get(fallback.key as string) } : { none: true }
}

/** The answers the rollouts after `from` may give (a context outside a threshold goes on to them). */
function rest(doc: Obj, flag: Obj, from: Obj, context: Obj): unknown[] {
  const rollouts = flag.rollouts as Obj[]
  const after = { ...flag, rollouts: rollouts.slice(rollouts.indexOf(from) + 1) }
  const answer = fliptAnswer(doc, after, context)
  return 'value' in answer ? [answer.value] : 'oneOf' in answer ? answer.oneOf : []
}
