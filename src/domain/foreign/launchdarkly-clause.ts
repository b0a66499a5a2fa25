/**
 * LaunchDarkly's clauses in flagd's rule language (docs/migrations.md#from-launchdarkly). A clause
 * matches when the context's attribute matches any of its values; a missing attribute never
 * matches, negated or not; `segmentMatch` stands for its segments (`$ref`). What the rule language
 * cannot say exactly for every well-typed context (a regular expression, dates given as text, a
 * clause on another context kind) throws {@link Unkept} with the reason, and the flag is skipped.
 */

import { parseStrictVersion, SEM_VER_MAX_LENGTH } from '../targeting/sem-ver.ts'

/** Why a flag or segment cannot be carried exactly. */
export class Unkept extends Error {}

/** A clause as LaunchDarkly stores it. */
interface Clause {
  attribute?: unknown
  op?: unknown
  values?: unknown
  negate?: unknown
  contextKind?: unknown
}

/** How a clause names a segment: its segment name in flagd, `undefined` when it is not carried, `null` when the file lacks it. */
export type SegmentNames = (ldKey: string) => string | undefined | null

const isText = (v: unknown): v is string => typeof v === 'string'
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)

const anyOf = (conditions: unknown[]): unknown => (conditions.length === 1 ? conditions[0] : { or: conditions })

/** The `var` path of a clause's attribute: `key` is the `targetingKey`, others keep their names. */
export function attributePath(attribute: unknown, contextKind: unknown): string {
  if (!isText(attribute) || attribute === '') throw new Unkept('a clause without an attribute')
  if (contextKind !== undefined && contextKind !== null && contextKind !== 'user')
    throw new Unkept(`a multi-context clause (context kind ${JSON.stringify(contextKind)}): flagd's contexts have no kinds`)
  // with a context kind, an attribute is a reference: "/address/city" is a path
  const parts =
    contextKind !== undefined && contextKind !== null && attribute.startsWith('/')
      ? attribute
          .slice(1)
          .split('/')
          .map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'))
      : [attribute]
  if (parts.some((p) => p === '' || p.includes('.')))
    throw new Unkept(`the attribute ${JSON.stringify(attribute)}: flagd's rules read a "." as a path into the context`)
  if (parts.length === 1 && parts[0] === 'kind') throw new Unkept("a clause on the context kind: flagd's contexts have no kinds")
  return parts.length === 1 && parts[0] === 'key' ? 'targetingKey' : parts.join('.')
}

/**
 * A version as LaunchDarkly reads a clause's value (a partial `1.2` is `1.2.0`), written out in full;
 * `undefined` when none, or when it is longer than flagd's `sem_ver` reads (a rule on it would never
 * match there).
 */
export function fullVersion(v: unknown): string | undefined {
  if (!isText(v) || v.startsWith('v') || v.length > SEM_VER_MAX_LENGTH) return undefined
  const m = /^(\d+)(\.\d+)?(\.\d+)?(.*)$/su.exec(v)
  if (!m) return undefined
  const full = `${m[1]}${m[2] ?? '.0'}${m[3] ?? '.0'}${m[4]}`
  return full === full.trim() && parseStrictVersion(full) !== undefined ? full : undefined
}

const COMPARISONS: Record<string, string> = {
  lessThan: '<',
  lessThanOrEqual: '<=',
  greaterThan: '>',
  greaterThanOrEqual: '>=',
  before: '<',
  after: '>',
}
const VERSION_OPS: Record<string, string> = { semVerEqual: '=', semVerLessThan: '<', semVerGreaterThan: '>' }

/** The condition a value of the attribute meets for one operator and the clause's values (before negation). */
function valueCondition(op: string, x: unknown, values: unknown[]): unknown {
  switch (op) {
    case 'in': {
      // LaunchDarkly compares with ===: a list or an object never equals a context's value
      const kept = values.filter((v) => isText(v) || isNumber(v) || typeof v === 'boolean')
      return kept.length === 0 ? false : { in: [x, kept] }
    }
    case 'startsWith':
    case 'endsWith': {
      const kept = values.filter(isText)
      const name = op === 'startsWith' ? 'starts_with' : 'ends_with'
      return kept.length === 0 ? false : anyOf(kept.map((v) => ({ [name]: [x, v] })))
    }
    case 'contains': {
      const kept = values.filter(isText)
      if (kept.includes('')) return true
      return kept.length === 0 ? false : anyOf(kept.map((v) => ({ in: [v, { cat: [x] }] })))
    }
    case 'before':
    case 'after':
      if (values.some((v) => !isNumber(v)))
        throw new Unkept(`the operator ${op} with a date given as text: flagd's rules compare dates only as Unix milliseconds`)
      return values.length === 0 ? false : anyOf(values.map((v) => ({ [COMPARISONS[op] as string]: [x, v] })))
    case 'lessThan':
    case 'lessThanOrEqual':
    case 'greaterThan':
    case 'greaterThanOrEqual': {
      const kept = values.filter(isNumber)
      return kept.length === 0 ? false : anyOf(kept.map((v) => ({ [COMPARISONS[op] as string]: [x, v] })))
    }
    case 'semVerEqual':
    case 'semVerLessThan':
    case 'semVerGreaterThan': {
      const kept = values.map(fullVersion).filter((v) => v !== undefined)
      return kept.length === 0 ? false : anyOf(kept.map((v) => ({ sem_ver: [x, VERSION_OPS[op] as string, v] })))
    }
    case 'matches':
      throw new Unkept("the operator matches (a regular expression): flagd's rule language has none")
    default:
      throw new Unkept(`the operator ${JSON.stringify(op)}, which LaunchDarkly does not document`)
  }
}

/** One clause as a condition of flagd's rule language. */
export function clauseCondition(clause: unknown, segments: SegmentNames): unknown {
  if (typeof clause !== 'object' || clause === null) throw new Unkept('a clause that is not an object')
  const c = clause as Clause
  const values = Array.isArray(c.values) ? c.values : []
  const negate = c.negate === true
  if (c.op === 'segmentMatch') {
    const refs = values.map((key) => {
      const name = isText(key) ? segments(key) : undefined
      if (name === null) throw new Unkept(`the segment ${JSON.stringify(key)} is not in the file`)
      if (name === undefined) throw new Unkept(`the segment ${JSON.stringify(key)}, which is not carried (see its own reason)`)
      return { $ref: name }
    })
    const matched = refs.length === 0 ? false : anyOf(refs)
    return negate ? { '!': matched } : matched
  }
  if (!isText(c.op)) throw new Unkept('a clause without an operator')
  const x = { var: attributePath(c.attribute, c.contextKind) }
  const matched = valueCondition(c.op, x, values)
  // a missing attribute matches nothing, negated or not
  const present = { '!==': [x, null] }
  return { and: [present, negate ? { '!': matched } : matched] }
}

/** The clauses of a rule, all of which must match (a rule without clauses matches every context). */
export function clausesCondition(clauses: unknown, segments: SegmentNames): unknown {
  const list = Array.isArray(clauses) ? clauses : []
  if (list.length === 0) return true
  // each clause's own `and` (presence, then match) joins the rule's: one flat list
  const conditions = list.flatMap((c) => {
    const one = clauseCondition(c, segments) as { and?: unknown[] }
    return typeof one === 'object' && one !== null && Array.isArray(one.and) ? one.and : [one]
  })
  return conditions.length === 1 ? conditions[0] : { and: conditions }
}
