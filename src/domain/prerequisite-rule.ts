/**
 * Prerequisites in flagd's own rule language (docs/targeting.md#prerequisites-in-flagd-format), so
 * that in-process providers and `@openfeature/flagd-core` on the export answer as OFREP does,
 * without knowing prerequisites. A flag F requiring P becomes
 * `{"if": [<P holds>, <F's own rule>, <F's default answer>]}`, where "P holds" is
 * `{"in": [<P's rule, inlined>, [<P's variants whose value is one of those named>]]}`: P's rule
 * as it would run for P itself, with its segments written out, each `fractional` seeded with P's
 * key (flagd seeds with the evaluated flag's key by default, which inlined would be F's) and
 * `$flagd.flagKey` read as P. A disabled P never holds; a P whose answer is fixed is decided here.
 */

import { allVariants, type Flag, type FlagValue, isEnabled, type JsonObject } from './flag.ts'
import type { FlagdFlag } from './flagd-document.ts'
import { sameJson } from './same-json.ts'

/** What compiling needs beside the flag: the flags of the environment by name, compiled as flagd flags, and the segments' rules. */
export interface PrerequisiteScope {
  /** The flagd flag of `name` (its targeting with its own prerequisites compiled), or `undefined` when none is served. */
  flagdOf(name: string): FlagdFlag | undefined
  flag(name: string): Flag | undefined
  /** `rule` with every `$ref` written out. */
  expand(rule: unknown): unknown
}

const FLAG_KEY = '$flagd.flagKey'

/** Whether `node` is `{"var": "$flagd.flagKey"}` (or its array form). */
function readsFlagKey(node: Record<string, unknown>): boolean {
  const keys = Object.keys(node)
  if (keys.length !== 1 || keys[0] !== 'var') return false
  const arg = node.var
  return arg === FLAG_KEY || (Array.isArray(arg) && arg[0] === FLAG_KEY)
}

/** The seed flagd gives a split of flag `key`: `key` followed by the targeting key, none without one. */
const seedOf = (key: string) => ({ if: [{ var: 'targetingKey' }, { cat: [key, { var: 'targetingKey' }] }, null] })

/** Whether `node` is `seedOf(K)` for some flag K: a split `seededFor` seeded already. */
function isSeed(node: unknown): boolean {
  const key = ((node as { if?: unknown[] } | null)?.if?.[1] as { cat?: unknown[] } | null | undefined)?.cat?.[0]
  return typeof key === 'string' && sameJson(node, seedOf(key))
}

/** `{"===": [{"cat": [x]}, x]}`: whether `x` is text. */
const isText = (x: unknown) => ({ '===': [{ cat: [x] }, x] })

/**
 * A split whose bucket key is the expression `given`, as flagd runs it for flag `key`: keyed by the
 * value when it is text; else flagd takes that value as a first bucket (which leaves the split
 * without an answer unless it is one) and keys it by the flag's own seed.
 */
function splitByExpression(given: unknown, buckets: unknown[], key: string): unknown {
  return { if: [isText(given), { fractional: [given, ...buckets] }, { fractional: [seedOf(key), given, ...buckets] }] }
}

/** Whether `node` is what `splitByExpression` wrote (for a required flag further down). */
function isSplitByExpression(node: Record<string, unknown>): boolean {
  const arg = node.if
  if (Object.keys(node).length !== 1 || !Array.isArray(arg) || arg.length !== 3) return false
  const own = (arg[2] as { fractional?: unknown[] } | null)?.fractional
  if (!Array.isArray(own) || own.length < 2 || !isSeed(own[0])) return false
  const key = (own[0] as { if: [unknown, { cat: [string] }] }).if[1].cat[0]
  return sameJson(node, splitByExpression(own[1], own.slice(2), key))
}

/**
 * `rule` as it answers for flag `key` wherever it runs: every `fractional` seeded as flagd seeds it
 * for `key` (`key` followed by the targeting key, none without one; by an expression, as
 * `splitByExpression` says), and `$flagd.flagKey` read as `key`. A split seeded already (a required
 * flag's rule inlined in its dependent's) is kept as it is.
 */
export function seededFor(rule: unknown, key: string): unknown {
  if (rule === null || typeof rule !== 'object') return rule
  if (Array.isArray(rule)) return rule.map((r) => seededFor(r, key))
  const node = rule as Record<string, unknown>
  if (readsFlagKey(node)) return key
  if (isSplitByExpression(node)) return node
  const split = node.fractional
  if (Object.keys(node).length === 1 && Array.isArray(split) && split.length > 0) {
    const [first, ...rest] = split as unknown[]
    if (isSeed(first)) return node
    if (Array.isArray(first)) return { fractional: [seedOf(key), ...split.map((b) => seededFor(b, key))] }
    if (typeof first === 'string') return { fractional: [first, ...rest.map((b) => seededFor(b, key))] }
    return splitByExpression(
      seededFor(first, key),
      rest.map((b) => seededFor(b, key)),
      key,
    )
  }
  const out: Record<string, unknown> = {}
  for (const [op, arg] of Object.entries(node)) out[op] = seededFor(arg, key)
  return out
}

/** The names of `p`'s flagd variants whose value is the value of one of `names` (its own variants). */
function acceptedNames(required: Flag, flagd: FlagdFlag, names: readonly string[]): string[] {
  const own = allVariants(required)
  const values: FlagValue[] = names.filter((n) => Object.hasOwn(own, n)).map((n) => own[n] as FlagValue)
  return Object.keys(flagd.variants).filter((n) => values.some((v) => sameJson(v, flagd.variants[n])))
}

/**
 * The condition "prerequisite `name` answers one of `names`" in flagd's rule language: `true` or
 * `false` when that is fixed, else the inlined test.
 */
function holdsRule(name: string, names: readonly string[], scope: PrerequisiteScope): unknown {
  const required = scope.flag(name)
  const flagd = scope.flagdOf(name)
  if (required === undefined || flagd === undefined || !isEnabled(required)) return false
  const accepted = acceptedNames(required, flagd, names)
  if (accepted.length === 0) return false
  // a rule's `true`/`false` stand for the variants so named (flagd's shorthand)
  const answers: unknown[] = [...accepted]
  for (const n of accepted) if (n === 'true' || n === 'false') answers.push(n === 'true')
  const fallback = flagd.defaultVariant ?? null
  if (fallback !== null && accepted.includes(fallback)) answers.push(null)
  if (flagd.targeting === undefined) return fallback !== null && accepted.includes(fallback)
  return { in: [seededFor(scope.expand(flagd.targeting), name), answers] }
}

/**
 * The targeting of flagd flag `f` (the flag `flag`, compiled without its prerequisites) with them
 * in front (see module comment); `unmet` is what the flag answers when one does not hold (`null`:
 * its default variant). Unchanged when it has none.
 */
export function withPrerequisites(flag: Flag, f: FlagdFlag, unmet: unknown, scope: PrerequisiteScope): JsonObject | undefined {
  const list = flag.prerequisites
  if (list === undefined || list.length === 0) return f.targeting
  const tests = list.map((p) => holdsRule(p.flag, p.variants, scope))
  if (tests.some((t) => t === false)) return unmet === null ? { if: [false, null, null] } : (unmet as JsonObject)
  const open = tests.filter((t) => t !== true)
  const own = f.targeting ?? null
  if (open.length === 0) return f.targeting
  const condition = open.length === 1 ? open[0] : { and: open }
  return { if: [condition, own, unmet] }
}
