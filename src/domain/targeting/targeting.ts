/**
 * A flag's targeting rule (docs/targeting.md#rules–19.2): its write-time shape limits, and what one
 * evaluation of it decides. A rule returns a variant name (`true`/`false` stand for the variants
 * `"true"`/`"false"`, flagd's shorthand), `null` for "serve the default", or anything else, which is
 * an error; so does a rule that faults or runs out of its work budget.
 */

import type { FieldProblem } from '../errors.ts'
import { nestingExceeds } from '../json-object.ts'
import type { Expr } from './compiled-expr.ts'
import { weighsNothing } from './fractional.ts'
import { RuleFault } from './json-logic-values.ts'
import { newRun, RULE_STEP_LIMIT, type TraceStep } from './rule-evaluation.ts'

/** The largest rule, serialized. */
export const MAX_RULE_BYTES = 64 * 1024
/** The deepest nesting of a rule. */
export const MAX_RULE_DEPTH = 24

/** What one evaluation of a rule decided. */
export type RuleOutcome =
  | { kind: 'variant'; variant: string; trace?: TraceStep[] }
  | { kind: 'default'; trace?: TraceStep[] }
  | { kind: 'error'; message: string; trace?: TraceStep[] }

/** Size and depth problems of a rule at `field` (checked before anything else reads it). */
export function ruleShapeProblems(rule: unknown, field: string): FieldProblem[] {
  const text = JSON.stringify(rule)
  if (text === undefined) return [{ field, reason: 'a rule is JSON' }]
  if (Buffer.byteLength(text) > MAX_RULE_BYTES) return [{ field, reason: `a rule is at most ${MAX_RULE_BYTES} bytes of JSON` }]
  if (nestingExceeds(rule, MAX_RULE_DEPTH)) return [{ field, reason: `a rule is nested at most ${MAX_RULE_DEPTH} levels deep` }]
  return []
}

/** What a rule run is told: the time it sees (Unix seconds, from the caller's clock), whether to trace it, its budget. */
export interface RunOptions {
  trace?: boolean
  limit?: number
  timestamp: number
}

/** Runs a compiled rule for `context` as flag `flagKey`. */
export function runRule(expr: Expr, context: unknown, flagKey: string, options: RunOptions): RuleOutcome {
  const run = newRun(context, flagKey, options.timestamp, options.trace === true, options.limit ?? RULE_STEP_LIMIT)
  const trace = run.trace ? { trace: run.trace } : {}
  let result: unknown
  try {
    result = expr(context, run)
  } catch (err) {
    if (err instanceof RuleFault) return { kind: 'error', message: err.message, ...trace }
    if (err instanceof RangeError || err instanceof TypeError)
      return { kind: 'error', message: `the rule failed: ${err.message}`, ...trace }
    throw err
  }
  if (result === null || result === undefined) return { kind: 'default', ...trace }
  if (typeof result === 'string') return { kind: 'variant', variant: result, ...trace }
  if (typeof result === 'boolean') return { kind: 'variant', variant: String(result), ...trace }
  return { kind: 'error', message: `the rule returned ${kindOf(result)}, not a variant name`, ...trace }
}

/** What a value is, in a few words (never the value written out: a rule may build a large one). */
function kindOf(v: unknown): string {
  if (Array.isArray(v)) return `a list of ${v.length} items`
  if (typeof v === 'object') return 'an object'
  if (typeof v === 'number') return `the number ${v}`
  return `a ${typeof v}`
}

/**
 * A flagd document's rule as flagd evaluates it: every literal negative `fractional` weight set to
 * 0 (`clamped` lists where), and a split whose literal weights are then all 0, which flagd answers
 * with the default, written as `{"if": [true, null]}` (the same answer; `emptied` lists where),
 * since a split that weighs nothing is refused when written here (docs/targeting.md#splits). The
 * input is not changed.
 */
export function clampFractionalWeights(rule: unknown, field = 'targeting'): { rule: unknown; clamped: string[]; emptied: string[] } {
  const clamped: string[] = []
  const emptied: string[] = []
  const walk = (node: unknown, path: string): unknown => {
    if (node === null || typeof node !== 'object') return node
    if (Array.isArray(node)) return node.map((n, i) => walk(n, `${path}[${i}]`))
    const out: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(node)) {
      const at = `${path}.${key}`
      if (key === 'fractional' && Array.isArray(value)) {
        const buckets = value.map((bucket, i) => {
          if (
            Array.isArray(bucket) &&
            bucket.length === 2 &&
            typeof bucket[1] === 'number' &&
            Number.isInteger(bucket[1]) &&
            bucket[1] < 0
          ) {
            clamped.push(`${at}[${i}][1]`)
            return [walk(bucket[0], `${at}[${i}][0]`), 0]
          }
          return walk(bucket, `${at}[${i}]`)
        })
        if (weighsNothing(buckets)) {
          emptied.push(at)
          return { if: [true, null] }
        }
        out[key] = buckets
      } else out[key] = walk(value, at)
    }
    return out
  }
  return { rule: walk(rule, field), clamped, emptied }
}
