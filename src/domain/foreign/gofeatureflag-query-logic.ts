/**
 * A parsed GO Feature Flag query turned into flagd's rule language with its meaning kept for every
 * context whose attributes have the types compared (docs/migrations.md#from-go-feature-flag): text
 * compared ignoring case as the tool does (by listing the ways to write the text, when that list
 * is short), integers compared after cutting the context's number to a whole one as the tool does,
 * a missing attribute never matching a comparison. What cannot be kept is said, and the flag skipped.
 */

import type { QueryNode, QueryOp, QueryValue } from './gofeatureflag-query-parser.ts'

/** A rule of flagd's rule language, or why the query cannot be kept exactly. */
export type LogicResult = { logic: unknown } | { problem: string }

const SEM_VER: Partial<Record<QueryOp, string>> = { eq: '=', ne: '!=', lt: '<', gt: '>', le: '<=', ge: '>=' }
const NUMERIC: Partial<Record<QueryOp, string>> = { lt: '<', gt: '>', le: '<=', ge: '>=' }
/** The most ways of writing a text a comparison that ignores case is turned into. */
const MAX_SPELLINGS = 64

class Untranslatable extends Error {}

/** `query` in flagd's rule language, or the problem that keeps it from being exact. */
export function queryLogic(query: QueryNode): LogicResult {
  try {
    return { logic: node(query) }
  } catch (e) {
    if (e instanceof Untranslatable) return { problem: e.message }
    throw e
  }
}

function node(q: QueryNode): unknown {
  if (q.kind === 'logical') {
    const parts = [q.left, q.right].flatMap((side) => {
      const logic = node(side)
      return side.kind === 'logical' && side.op === q.op ? ((logic as Record<string, unknown[]>)[q.op] as unknown[]) : [logic]
    })
    return { [q.op]: parts }
  }
  if (q.kind === 'not') return { '!': node(q.query) }
  if (q.kind === 'present') return present(attribute(q.path))
  return compare(q.path, q.op, q.value)
}

/** The attribute a path reads: `key` and `targetingKey` are the targeting key (empty when absent), `anonymous` false when absent. */
function attribute(path: string[]): unknown {
  const name = path.join('.')
  if (name === 'key' || name === 'targetingKey') return { var: ['targetingKey', ''] }
  if (name === 'anonymous') return { var: ['anonymous', false] }
  return { var: name }
}

function fail(path: string[], op: QueryOp, why: string): never {
  throw new Untranslatable(`"${path.join('.')} ${op} …": ${why}`)
}

// strict: flagd's loose `==` holds between null and 0, false or ""
const present = (v: unknown) => ({ '!==': [v, null] })
const and = (...parts: unknown[]) => ({ and: parts })

function compare(path: string[], op: QueryOp, value: QueryValue): unknown {
  const v = attribute(path)
  switch (value.kind) {
    case 'string':
      return text(path, op, v, value.value)
    case 'strings':
      if (op !== 'in') fail(path, op, 'GO Feature Flag compares only "in" with a list: the comparison never holds there')
      return { in: [v, value.value] }
    case 'int':
      return integer(path, op, v, value.value)
    case 'ints':
      if (op !== 'in') fail(path, op, 'GO Feature Flag compares only "in" with a list: the comparison never holds there')
      if (path.length > 1)
        fail(path, op, 'GO Feature Flag matches a nested number against a list of integers only when the SDK passed it as an integer')
      return { in: [v, value.value] }
    case 'double':
      if (op === 'eq') return { '===': [v, value.value] }
      if (op === 'ne') return and(present(v), { '!==': [v, value.value] })
      if (NUMERIC[op] !== undefined) return and(present(v), { [NUMERIC[op] as string]: [v, value.value] })
      return fail(path, op, `"${op}" is not an operation on numbers in GO Feature Flag (the query never matches)`)
    case 'doubles':
      if (op !== 'in') fail(path, op, 'GO Feature Flag compares only "in" with a list: the comparison never holds there')
      return { in: [v, value.value] }
    case 'bool':
      if (op === 'eq') return { '===': [v, value.value] }
      if (op === 'ne') return and(present(v), { '!==': [v, value.value] })
      return fail(path, op, `"${op}" is not an operation on booleans in GO Feature Flag (the query never matches)`)
    case 'null':
      if (op === 'eq') return { '===': [v, null] }
      if (op === 'ne') return present(v)
      return fail(path, op, `"${op}" is not an operation on null in GO Feature Flag (the query never matches)`)
    case 'version':
      if (SEM_VER[op] === undefined) fail(path, op, `"${op}" is not an operation on versions in GO Feature Flag (the query never matches)`)
      return { sem_ver: [v, SEM_VER[op], value.value] }
  }
}

/**
 * An integer comparison as the tool makes it: the context's number cut to a whole number toward
 * zero, then compared; written as the range of numbers whose whole part compares so.
 */
function integer(path: string[], op: QueryOp, v: unknown, n: number): unknown {
  // whole part ≤ k, and whole part ≥ k, as ranges of the number itself
  const atMost = (k: number) => (k >= 0 ? { '<': [v, k + 1] } : { '<=': [v, k] })
  const atLeast = (k: number) => (k <= 0 ? { '>': [v, k - 1] } : { '>=': [v, k] })
  switch (op) {
    case 'eq':
      return and(present(v), atLeast(n), atMost(n))
    case 'ne':
      return and(present(v), { '!': and(atLeast(n), atMost(n)) })
    case 'lt':
      return and(present(v), atMost(n - 1))
    case 'le':
      return and(present(v), atMost(n))
    case 'gt':
      return and(present(v), atLeast(n + 1))
    case 'ge':
      return and(present(v), atLeast(n))
    default:
      return fail(path, op, `"${op}" is not an operation on integers in GO Feature Flag (the query never matches)`)
  }
}

/** A text comparison as the tool makes it: both sides in lower case. */
function text(path: string[], op: QueryOp, v: unknown, s: string): unknown {
  if (op === 'in') fail(path, op, 'GO Feature Flag compares "in" only with a list: the comparison never holds')
  if (NUMERIC[op] !== undefined) fail(path, op, 'GO Feature Flag orders text ignoring case, which flagd’s rule language cannot express')
  const ways = spellings(s)
  if (ways === undefined)
    fail(
      path,
      op,
      `GO Feature Flag compares text ignoring case, and "${s}" has too many spellings to list (more than ${MAX_SPELLINGS}, or letters beyond A-Z)`,
    )
  const one = (w: string) =>
    op === 'co' ? { in: [w, v] } : op === 'sw' ? { starts_with: [v, w] } : op === 'ew' ? { ends_with: [v, w] } : { '===': [v, w] }
  const any = ways.length === 1 ? one(ways[0] as string) : op === 'eq' || op === 'ne' ? { in: [v, ways] } : { or: ways.map(one) }
  if (op === 'eq') return any
  if (op === 'ne') return and(present(v), { '!': any })
  // contains, starts and ends with: only on text that is there
  return and(present(v), any)
}

/**
 * Every text whose lower case is `s` lowered, the way GO Feature Flag lowers text (letters A-Z,
 * and the Kelvin sign and the dotted capital I, which it lowers to `k` and `i`); `undefined` when
 * `s` has other letters with a case, or there are more than `MAX_SPELLINGS`.
 */
export function spellings(s: string): string[] | undefined {
  let out = ['']
  for (const upper of s) {
    const c = upper >= 'A' && upper <= 'Z' ? upper.toLowerCase() : upper
    let forms: string[]
    if (c >= 'a' && c <= 'z') forms = [c, c.toUpperCase(), ...(c === 'k' ? ['\u212A'] : c === 'i' ? ['\u0130'] : [])]
    else if (c.toUpperCase() === c && c.toLowerCase() === c) forms = [c]
    else return undefined
    if (out.length * forms.length > MAX_SPELLINGS) return undefined
    out = out.flatMap((prefix) => forms.map((f) => prefix + f))
  }
  return out
}
