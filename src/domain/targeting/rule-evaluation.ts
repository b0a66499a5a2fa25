/**
 * One evaluation of a compiled rule: the context it reads, what `$flagd` stands for, the work
 * budget, and the trace when one is asked for (`POST /api/flags/{name}/evaluate`). Created per
 * evaluation; compiled rules themselves hold no state.
 */

import { RuleFault } from './json-logic-values.ts'
import { valueSize } from './value-size.ts'

/**
 * The work one evaluation may do: operations, list items visited, and the written-out size of every
 * value an operator is given or a rule builds (`valueSize`). See docs/targeting.md#bounds.
 */
export const RULE_STEP_LIMIT = 200_000

/** One step of a trace, in the order the evaluation took it. */
export type TraceStep =
  | { kind: 'condition'; path: string; rule: unknown; result: boolean }
  | { kind: 'segment'; name: string; matched: boolean }
  | { kind: 'fractional'; path: string; bucketKey: string; bucket: number; total: number; variant: unknown }
  | { kind: 'fractional-skipped'; path: string; reason: string }
  /** Where a progressive rollout stands (docs/change-control.md#progressive-rollouts), before its rule runs. */
  | { kind: 'rollout'; variant: string; percent: number; step: number; steps: number; paused?: true }
  /** A prerequisite looked at before the rule (docs/api.md#prerequisites): whether it held, and what the required flag answered. */
  | PrerequisiteStep

/** A prerequisite as the trace shows it: whether it held and what the required flag answered. */
export type PrerequisiteStep = {
  kind: 'prerequisite'
  flag: string
  variants: string[]
  holds: boolean
  /** What the required flag answered: its value and variant, its reason, or its error (`FLAG_NOT_FOUND`, `GENERAL`). */
  answered: { value?: unknown; variant?: string; reason?: string; errorCode?: string }
}

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
  /** Segments already evaluated against the whole context in this run, by name (each runs once); made at the first. */
  segments: Map<string, unknown> | undefined
}

/** A new evaluation of `flagKey` for `context` at `timestamp` (Unix seconds, from the caller's clock). */
export function newRun(context: unknown, flagKey: string, timestamp: number, trace = false, limit = RULE_STEP_LIMIT): RuleRun {
  return {
    root: context,
    flagKey,
    timestamp,
    steps: 0,
    limit,
    trace: trace ? [] : undefined,
    segments: undefined,
  }
}

/**
 * The work of an operator over `args`: one, plus the written-out size of each argument, so `in`,
 * `merge`, `cat`, comparisons and `sem_ver` pay for what they walk and what they turn into text,
 * however much of it is shared structure.
 */
export function argumentsCost(args: readonly unknown[]): number {
  let cost = 1 + args.length
  for (let i = 0; i < args.length; i++) {
    const a = args[i]
    if (typeof a === 'string') cost += a.length >> 4
    else if (a !== null && typeof a === 'object') cost += valueSize(a) - 1
  }
  return cost
}

/** Counts the building of `v` (a list a rule makes) and returns it. */
export function built<T>(run: RuleRun, v: T): T {
  spend(run, valueSize(v))
  return v
}

/** Counts `n` units of work; past the budget the evaluation fails. */
export function spend(run: RuleRun, n: number): void {
  run.steps += n
  if (run.steps > run.limit) throw new RuleFault(`the rule needed more than ${run.limit} steps of work for this context`)
}
