/**
 * Compiles a rule of flagd's JsonLogic dialect into a tree of closures, once per flag revision:
 * evaluating it then allocates nothing but what the operators themselves return. The same walk
 * validates (docs/targeting.md#rules): only flagd's operators, every `$ref` an existing segment with no
 * cycle, every text in a result position (the branches of `if`, the buckets of `fractional`) a
 * variant of the flag, literal `fractional` weights non-negative integers. Every problem is
 * reported with its place in the rule (`targeting.if[1]`), so the whole rule is checked at once.
 */

import type { FieldProblem } from '../errors.ts'
import { compileArgs, constant, type Expr, evaluateArgs, type RuleEnv, type Walk } from './compiled-expr.ts'
import { compileStructural, STRUCTURAL_OPERATORS } from './control-operators.ts'
import { truthy } from './json-logic-values.ts'
import { argumentsCost, built, type RuleRun, spend } from './rule-evaluation.ts'
import { ownValue, splitPath, VALUE_OPERATORS } from './rule-operators.ts'
import { valueSize } from './value-size.ts'

export type { Expr, RuleEnv }

/** Every operator a rule may use. */
export const RULE_OPERATORS: readonly string[] = [...Object.keys(VALUE_OPERATORS), ...STRUCTURAL_OPERATORS, 'var', '$ref'].sort()

/** `$flagd` as the rule sees it at the top level: one of its properties, or all of it when no `key` is given. */
function flagdProperty(run: RuleRun, key?: string): unknown {
  if (key === undefined) return { flagKey: run.flagKey, timestamp: run.timestamp }
  return key === 'flagKey' ? run.flagKey : key === 'timestamp' ? run.timestamp : undefined
}

/** Looks `parts` up in `data` (`$flagd` at the top level is flagd's own). */
export function lookup(data: unknown, parts: readonly string[], run: RuleRun): unknown {
  if (parts[0] === '$flagd' && data === run.root) return parts.length <= 2 ? flagdProperty(run, parts[1]) : undefined
  let cur = data
  for (const part of parts) {
    cur = ownValue(cur, part)
    if (cur === undefined) return undefined
  }
  return cur
}

/** The whole data (`{"var": ""}`); at the top level with `$flagd` added, as flagd shows it. */
function wholeData(data: unknown, run: RuleRun): unknown {
  if (data !== run.root || data === null || typeof data !== 'object') return data
  // a copy of the context each time: charged before it is made, so thousands of them cannot pile up
  spend(run, valueSize(data))
  return { ...(data as object), $flagd: flagdProperty(run) }
}

function compileVar(walk: Walk, node: unknown, path: string): Expr {
  const [key, fallback] = Array.isArray(node) ? node : [node]
  // the default may itself be an operation (evaluated only when the path holds nothing)
  const orElse = walk.compile(fallback === undefined ? null : fallback, `${path}[1]`, false)
  if (key !== null && typeof key === 'object') {
    const keyExpr = walk.compile(key, `${path}[0]`, false) // a computed path, evaluated each time
    return (data, run) => {
      const k = keyExpr(data, run)
      const v = k === undefined || k === null || k === '' ? wholeData(data, run) : lookup(data, splitPath(String(k)), run)
      return v === undefined || v === null ? orElse(data, run) : v
    }
  }
  if (key === undefined || key === null || key === '') return (data, run) => wholeData(data, run) ?? orElse(data, run)
  if (typeof key !== 'string' && typeof key !== 'number') {
    walk.problems.push({ field: path, reason: 'var takes a path (text or number), or [path, default]' })
    return constant(null)
  }
  const parts = splitPath(String(key))
  return (data, run) => lookup(data, parts, run) ?? orElse(data, run)
}

function compileRef(walk: Walk, name: unknown, path: string, result: boolean): Expr {
  if (typeof name !== 'string') {
    walk.problems.push({ field: path, reason: '$ref takes the name of a segment' })
    return constant(null)
  }
  const rule = walk.env.segments.get(name)
  if (rule === undefined) {
    walk.problems.push({ field: path, reason: `segment ${name} does not exist` })
    return constant(null)
  }
  if (walk.refs.includes(name)) {
    walk.problems.push({ field: path, reason: `segments refer to each other in a cycle: ${[...walk.refs, name].join(' → ')}` })
    return constant(null)
  }
  const compiled = compiledSegment(walk, name, rule, path, result)
  const { expr: inner, problems } = compiled
  compiled.references++
  // a problem inside the segment is reported at this reference, once, naming the segment
  const seen = new Set<string>()
  for (const p of problems) {
    const reason = p.reason.startsWith('segments refer to each other') ? p.reason : `segment ${name}: ${p.reason}`
    if (!seen.has(reason)) walk.problems.push({ field: path, reason })
    seen.add(reason)
  }
  return (data, run) => {
    // against the whole context a segment's value is the same at every reference: computed once
    // (remembered only for a segment referred to more than once, so a single use allocates nothing)
    let v: unknown
    if (data !== run.root || compiled.references < 2) v = inner(data, run)
    else if (run.segments?.has(name)) v = run.segments.get(name)
    else (run.segments ??= new Map()).set(name, (v = inner(data, run)))
    run.trace?.push({ kind: 'segment', name, matched: truthy(v) })
    return v
  }
}

/** Segment `name` compiled once per walk (its problems kept for every reference). */
function compiledSegment(walk: Walk, name: string, rule: unknown, path: string, result: boolean) {
  const known = walk.compiledSegments.get(name)
  if (known) return known
  walk.refs.push(name)
  // the segment's own texts are not checked against this flag's variants (docs/targeting.md#rules)
  const env = walk.env
  walk.env = { segments: env.segments }
  const found = walk.problems.length
  const expr = walk.compile(rule, path, result)
  walk.env = env
  walk.refs.pop()
  const out = { expr, problems: walk.problems.splice(found), references: 0 }
  walk.compiledSegments.set(name, out)
  return out
}

/**
 * Compiles `rule` for `env`; the problems name places under `field`. `within` names the segment
 * whose rule this is, so a reference back to it is reported as a cycle.
 */
export function compileRule(rule: unknown, env: RuleEnv, field = 'targeting', within?: string): { expr: Expr; problems: FieldProblem[] } {
  const { expr, problems } = compileRuleReferring(rule, env, field, within)
  return { expr, problems }
}

/** `compileRule`, also naming every segment the rule refers to, directly or through others. */
export function compileRuleReferring(
  rule: unknown,
  env: RuleEnv,
  field = 'targeting',
  within?: string,
): { expr: Expr; problems: FieldProblem[]; referred: Iterable<string> } {
  const walk: Walk = {
    env,
    problems: [],
    refs: within === undefined ? [] : [within],
    compiledSegments: new Map(),
    compile(node, path, result) {
      if (node === null || typeof node !== 'object') {
        if (result && typeof node === 'string' && walk.env.variants && !walk.env.variants.has(node)) {
          const known = [...walk.env.variants].slice(0, 20).join(', ')
          walk.problems.push({ field: path, reason: `"${node}" is not a variant of this flag (variants: ${known || 'none'})` })
        }
        return constant(node)
      }
      if (Array.isArray(node)) {
        const items = node.map((n, i) => walk.compile(n, `${path}[${i}]`, false))
        if (node.every((n) => n === null || typeof n !== 'object')) return constant(node)
        return (data, run) =>
          built(
            run,
            items.map((item) => item(data, run)),
          )
      }
      const keys = Object.keys(node)
      if (keys.length === 0) return constant(node)
      if (keys.length > 1) {
        walk.problems.push({ field: path, reason: `an operation has exactly one key, the operator (found ${keys.slice(0, 5).join(', ')})` })
        return constant(null)
      }
      const op = keys[0] as string
      const argsNode = (node as Record<string, unknown>)[op]
      const at = `${path}.${op}`
      if (op === 'var') return compileVar(walk, argsNode, at)
      if (op === '$ref') return compileRef(walk, argsNode, at, result)
      if (STRUCTURAL_OPERATORS.includes(op)) return compileStructural(walk, op, argsNode, at, result)
      // an own entry only: an operator named toString or valueOf is unknown, not an object's built-in
      const operator = Object.hasOwn(VALUE_OPERATORS, op) ? VALUE_OPERATORS[op] : undefined
      if (!operator) {
        walk.problems.push({ field: path, reason: `unknown operator "${op}" (flagd's operators: ${RULE_OPERATORS.join(' ')})` })
        return constant(null)
      }
      const args = compileArgs(walk, argsNode, at)
      return (data, run) => {
        const values = evaluateArgs(args, data, run)
        spend(run, argumentsCost(values))
        return operator(values, data)
      }
    },
  }
  const expr = walk.compile(rule, field, env.variants !== undefined)
  return { expr, problems: walk.problems, referred: walk.compiledSegments.keys() }
}
