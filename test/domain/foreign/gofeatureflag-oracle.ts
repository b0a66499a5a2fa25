/**
 * GO Feature Flag's answer for a flag and a context, written from its documented semantics and its
 * query engine's (nikunjy/rules): what the import is judged against (docs/migrations.md#from-go-feature-flag).
 * Percentage splits and progressive rollouts are left out (which contexts fall in a share differs by design).
 */

import { parseGoFeatureFlagQuery, type QueryNode, type QueryValue } from '../../../src/domain/foreign/gofeatureflag-query-parser.ts'

class Invalid extends Error {}

/** Go's `strings.ToLower` for the letters a test context uses (ASCII, the Kelvin sign, the dotted capital I, then Unicode). */
function goLower(s: string): string {
  return [...s].map((c) => (c === '\u212A' ? 'k' : c === '\u0130' ? 'i' : c.toLowerCase())).join('')
}

function lookup(ctx: Record<string, unknown>, path: string[]): unknown {
  const name = path.join('.')
  if (name === 'key' || name === 'targetingKey') return ctx.targetingKey ?? ''
  if (name === 'anonymous') return ctx.anonymous === true
  let at: unknown = ctx
  for (const part of path) {
    if (at === null || typeof at !== 'object') return undefined
    at = (at as Record<string, unknown>)[part]
  }
  return at ?? undefined
}

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/u
function semverCompare(a: string, b: string): number | undefined {
  const x = SEMVER.exec(a)
  const y = SEMVER.exec(b)
  if (!x || !y) return undefined
  for (let i = 1; i <= 3; i++) if (Number(x[i]) !== Number(y[i])) return Number(x[i]) - Number(y[i])
  if (x[4] === y[4]) return 0
  if (x[4] === undefined) return 1
  if (y[4] === undefined) return -1
  const p = x[4].split('.')
  const q = y[4].split('.')
  for (let i = 0; i < Math.max(p.length, q.length); i++) {
    if (p[i] === undefined) return -1
    if (q[i] === undefined) return 1
    const pn = /^\d+$/u.test(p[i] as string)
    const qn = /^\d+$/u.test(q[i] as string)
    if (pn && qn && Number(p[i]) !== Number(q[i])) return Number(p[i]) - Number(q[i])
    if (pn !== qn) return pn ? -1 : 1
    if (p[i] !== q[i]) return (p[i] as string) < (q[i] as string) ? -1 : 1
  }
  return 0
}

function ordered(op: string, c: number): boolean {
  return { eq: c === 0, ne: c !== 0, lt: c < 0, gt: c > 0, le: c <= 0, ge: c >= 0 }[op] as boolean
}

function compare(left: unknown, op: string, value: QueryValue): boolean {
  switch (value.kind) {
    case 'string': {
      if (typeof left !== 'string') return false
      const l = goLower(left)
      const r = goLower(value.value)
      if (op === 'co') return l.includes(r)
      if (op === 'sw') return l.startsWith(r)
      if (op === 'ew') return l.endsWith(r)
      if (op === 'in') return false
      return ordered(op, Buffer.compare(Buffer.from(l), Buffer.from(r)))
    }
    case 'strings':
      return op === 'in' && typeof left === 'string' && value.value.includes(left)
    case 'int':
      if (['co', 'sw', 'ew', 'in'].includes(op)) throw new Invalid()
      return typeof left === 'number' && ordered(op, Math.trunc(left) - value.value)
    case 'ints':
      return op === 'in' && typeof left === 'number' && Number.isInteger(left) && value.value.includes(left)
    case 'double':
      if (['co', 'sw', 'ew', 'in'].includes(op)) throw new Invalid()
      return typeof left === 'number' && ordered(op, left - value.value)
    case 'doubles':
      return op === 'in' && typeof left === 'number' && value.value.includes(left)
    case 'bool':
      if (op !== 'eq' && op !== 'ne') throw new Invalid()
      return typeof left === 'boolean' && (op === 'eq') === (left === value.value)
    case 'null':
      if (op !== 'eq' && op !== 'ne') throw new Invalid()
      return (op === 'eq') === (left === undefined || left === null)
    case 'version': {
      if (['co', 'sw', 'ew', 'in'].includes(op)) throw new Invalid()
      const c = typeof left === 'string' ? semverCompare(left, value.value) : undefined
      return c !== undefined && ordered(op, c)
    }
  }
}

function evaluate(q: QueryNode, ctx: Record<string, unknown>): boolean {
  if (q.kind === 'logical')
    return q.op === 'and' ? evaluate(q.left, ctx) && evaluate(q.right, ctx) : evaluate(q.left, ctx) || evaluate(q.right, ctx)
  if (q.kind === 'not') return !evaluate(q.query, ctx)
  const left = lookup(ctx, q.path)
  if (q.kind === 'present') return left !== undefined
  return compare(left, q.op, q.value)
}

/** Whether GO Feature Flag's query engine matches `query` on the context (an invalid operation fails the whole query). */
export function queryMatches(query: string, ctx: Record<string, unknown>): boolean {
  if (query.trim() === '') return true
  const parsed = parseGoFeatureFlagQuery(query.trim())
  if ('error' in parsed) return false
  try {
    return evaluate(parsed.query, ctx)
  } catch (e) {
    if (e instanceof Invalid) return false
    throw e
  }
}

type Json = Record<string, any>
const SHARE = 'which contexts fall in a share differs by design'

/** The value GO Feature Flag answers, `undefined` for the application's default; `nowMs` the evaluation time. */
export function goffValue(flag: Json, ctx: Record<string, unknown>, nowMs: number): unknown {
  const bucketing = JSON.stringify([flag.defaultRule, flag.targeting]).match(/"percentage"|"progressiveRollout"/u) !== null
  const key = flag.bucketingKey ? ctx[flag.bucketingKey] : ctx.targetingKey
  if (flag.bucketingKey && typeof key !== 'string') return undefined
  if (bucketing && (key === undefined || key === '')) return undefined
  if (flag.disable === true) return undefined
  const x = flag.experimentation
  if (x && ((x.start && nowMs < Date.parse(x.start)) || (x.end && nowMs > Date.parse(x.end)))) return undefined
  for (const rule of flag.targeting ?? []) {
    if (rule.disable === true || !queryMatches(rule.query ?? '', ctx)) continue
    if (rule.percentage) throw new Error(SHARE)
    return flag.variations[rule.variation]
  }
  const d = flag.defaultRule
  if (d.progressiveRollout) {
    const { initial, end } = d.progressiveRollout
    if (nowMs < Date.parse(initial.date)) return flag.variations[initial.variation]
    if (nowMs >= Date.parse(end.date) && (end.percentage ?? 100) >= 100) return flag.variations[end.variation]
    throw new Error(SHARE)
  }
  if (d.percentage) throw new Error(SHARE)
  return flag.variations[d.variation]
}
