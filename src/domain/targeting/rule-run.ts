/**
 * One evaluation of a compiled rule: the context it reads, what `$flagd` stands for, the work
 * budget, and the trace when one is asked for (`POST /api/flags/{name}/evaluate`). Created per
 * evaluation; compiled rules themselves hold no state.
 */

import { RuleFault } from './json-logic-values.ts'

/** The work one evaluation may do (operations, list items visited, text produced / 16). */
export const RULE_STEP_LIMIT = 200_000

/** One step of a trace, in the order the evaluation took it. */
export type TraceStep =
  | { kind: 'condition'; path: string; rule: unknown; result: boolean }
  | { kind: 'segment'; name: string; matched: boolean }
  | { kind: 'fractional'; path: string; bucketKey: string; bucket: number; total: number; variant: unknown }
  | { kind: 'fractional-skipped'; path: string; reason: string }

/** The state of one evaluation. */
export interface RuleRun {
  /** The evaluation context (the top-level data of the rule). */
  readonly root: unknown
  readonly flagKey: string
  /** Unix seconds when the evaluation started. */
  readonly timestamp: number
  steps: number
  readonly limit: number
  /** Present when the caller asked why: the steps are appended here. */
  readonly trace: TraceStep[] | undefined
}

/** A new evaluation of `flagKey` for `context`. */
export function newRun(context: unknown, flagKey: string, trace = false, limit = RULE_STEP_LIMIT): RuleRun {
  return { root: context, flagKey, timestamp: Math.floor(Date.now() / 1000), steps: 0, limit, trace: trace ? [] : undefined }
}

/**
 * The work of an operator over `args`: one, plus the items of every list and a sixteenth of the
 * characters of every text it is given (so `in`, `merge`, `cat` and comparisons of long texts pay
 * for what they walk and what they build, and a rule that doubles a list or a text each step runs
 * out of budget long before memory does).
 */
export function argumentsCost(args: readonly unknown[]): number {
  let cost = 1 + args.length
  for (const a of args) {
    if (Array.isArray(a)) cost += a.length
    else if (typeof a === 'string') cost += a.length >> 4
  }
  return cost
}

/** Counts `n` units of work; past the budget the evaluation fails. */
export function spend(run: RuleRun, n: number): void {
  run.steps += n
  if (run.steps > run.limit) throw new RuleFault(`the rule needed more than ${run.limit} steps of work for this context`)
}
