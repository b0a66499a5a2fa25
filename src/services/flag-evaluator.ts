/**
 * The plain evaluator (docs/architecture.md#caching): a committed snapshot's definitions and a
 * context in, answers out, with nothing kept from one request for the next. The caching decorator
 * (`cached-flag-evaluator.ts`) wraps it with the same interface; tests hold the two to the same
 * answers.
 *
 * What it does keep is each rule compiled, once per stored row: a row never changes (a new revision
 * is a new row, and a segment's change gives every flag using it one), so the compiled rule is part
 * of the definition, like its parsed JSON, and goes when the row does.
 */

import { canSeeFlag, flagScopeOf, visiblePrefixes } from '../domain/access-policy.ts'
import { answerFor, type EvaluationContext, type EvaluationResult, evaluate, isFailure } from '../domain/evaluation.ts'
import { type Flag, isEnabled, type JsonObject } from '../domain/flag.ts'
import { environmentOf, type Principal } from '../domain/principal.ts'
import { rolloutAt, servedTargeting } from '../domain/rollout.ts'
import { inRollout } from '../domain/rollout-bucket.ts'
import { RuleFault } from '../domain/targeting/json-logic-values.ts'
import { compileRule, type Expr } from '../domain/targeting/rule-compiler.ts'
import { type RuleOutcome, runRule } from '../domain/targeting/targeting.ts'
import type { Snapshot } from '../storage/store.ts'
import type { FlagReadModel } from './flag-read-model.ts'
import type { CountableAnswer, CountedTemplate } from './usage-counter.ts'

/** A flag's rule could not decide for this context (OFREP `GENERAL`). */
export class EvaluationFailed extends Error {
  constructor(
    readonly key: string,
    readonly details: string,
  ) {
    super(details)
  }
}

/** An answer as JSON text with what usage counts of it; a rule's failure is thrown where text is wanted. */
export interface Answer extends CountableAnswer {
  text: string
  failure?: EvaluationFailed
}

/** What usage counts of a bulk answer: templates (one increment each) and single answers. */
export interface BulkCounts {
  templates: CountedTemplate[]
  answers: [Flag, Answer][]
}

/** Every visible flag's answer as the JSON text of OFREP's `flags` array, and what to count of it. */
export interface BulkEvaluation {
  flags: string
  counts: BulkCounts
}

/** The evaluator's interface, plain or cached. */
export interface FlagEvaluator {
  /** One flag's answer; `timestamp` (Unix seconds) is read from the clock when a rule needs it and none is given. */
  one(flag: Flag, context: EvaluationContext, snapshot: Snapshot, timestamp?: number): Answer
  /**
   * Every flag `principal` sees, answered for `context` at `timestamp`. `etag` names this very
   * answer (revision, scope, context, second), so a cache may key it by that.
   */
  all(principal: Principal, context: EvaluationContext, snapshot: Snapshot, timestamp: number | undefined, etag: string): BulkEvaluation
  /** What a `304` counts: every flag `principal` sees, as asked for without a known variant. */
  asked(principal: Principal, snapshot: Snapshot): CountedTemplate
  /** One flag evaluated with the trace of its rule. */
  explain(flag: Flag, context: EvaluationContext, snapshot: Snapshot): EvaluationResult
}

/** The parts of the plain evaluator a caching decorator builds on. */
export interface PlainFlagEvaluator extends FlagEvaluator {
  /** What the flag's rule decides for `context` (the flag has a rule). */
  outcome(flag: Flag, context: EvaluationContext, snapshot: Snapshot, timestamp?: number): RuleOutcome
  /** The answer that follows from an outcome (never running the rule again). */
  answerFrom(flag: Flag, context: EvaluationContext, outcome: RuleOutcome): Answer
  /** The flags `principal` sees, in name order. */
  visible(principal: Principal): Flag[]
}

/** The answer of an evaluation result. */
export function answerOf(r: EvaluationResult): Answer {
  if (isFailure(r)) return { text: '', variant: '', reason: 'ERROR', failure: new EvaluationFailed(r.key, r.errorDetails) }
  return { text: JSON.stringify(r), variant: r.variant ?? '', reason: r.reason }
}

/** An answer as an item of OFREP's bulk `flags` array (a failure as an error item). */
export const bulkItem = (answer: Answer): string =>
  answer.failure === undefined
    ? answer.text
    : JSON.stringify({ key: answer.failure.key, errorCode: 'GENERAL', errorDetails: answer.failure.details })

/** True when the flag's answer is the same for every context. */
export const fixedAnswer = (flag: Flag): boolean =>
  !isEnabled(flag) || (servedTargeting(flag) === undefined && !(flag.type === 'AB-TEST' && !flag.valueExists))

/** Creates the plain evaluator over the flags' read model; `clock` (ms) is the time rules see. */
export function createFlagEvaluator(read: FlagReadModel, clock: () => number): PlainFlagEvaluator {
  const rules = new WeakMap<Flag, Expr>()
  const seconds = () => Math.floor(clock() / 1000)

  const ruleOf = (flag: Flag, snapshot: Snapshot): Expr | undefined => {
    // the flag's rule, with its rollout in front when it has one (rollout.ts)
    const rule = servedTargeting(flag)
    if (rule === undefined) return undefined
    let expr = rules.get(flag)
    if (!expr) {
      const compile = (r: JsonObject) => {
        // validated at write, so problems here mean a segment went missing since: evaluation fails
        const compiled = compileRule(r, { segments: snapshot.segmentRules() })
        return compiled.problems.length === 0 ? compiled.expr : failing(compiled.problems.map((p) => `${p.field}: ${p.reason}`).join('; '))
      }
      const rollout = flag.rollout
      // a rollout by targetingKey decides natively what its rule decides (tests hold the two together)
      if (rollout !== undefined && rollout.by === undefined) {
        const rest = flag.targeting === undefined ? undefined : compile(flag.targeting)
        expr = (data, run) => {
          const key = (data as { targetingKey?: unknown }).targetingKey
          if (inRollout(rollout, key ? `${run.flagKey}${String(key)}` : undefined, run.timestamp)) return rollout.variant
          return rest === undefined ? null : rest(data, run)
        }
      } else expr = compile(rule)
      rules.set(flag, expr)
    }
    return expr
  }

  const evaluator: PlainFlagEvaluator = {
    one: (flag, context, snapshot, timestamp) =>
      answerOf(evaluate(flag, context, ruleOf(flag, snapshot), { timestamp: timestamp ?? seconds() })),
    outcome: (flag, context, snapshot, timestamp) =>
      runRule(ruleOf(flag, snapshot) as Expr, context, flag.name, { timestamp: timestamp ?? seconds() }),
    answerFrom: (flag, context, outcome) => answerOf(answerFor(flag, context, outcome)),
    visible: (principal) =>
      read.list(visiblePrefixes(flagScopeOf(principal), ''), environmentOf(principal)).filter((flag) => canSeeFlag(principal, flag.name)),
    all(principal, context, snapshot, timestamp) {
      const answers = evaluator.visible(principal).map((flag): [Flag, Answer] => [flag, evaluator.one(flag, context, snapshot, timestamp)])
      return { flags: `[${answers.map(([, a]) => bulkItem(a)).join(',')}]`, counts: { templates: [], answers } }
    },
    asked: (principal) => ({ fixed: evaluator.visible(principal).map((flag) => ({ flag, variant: '', reason: 'NOT_MODIFIED' })) }),
    explain(flag, context, snapshot) {
      const at = seconds()
      const result = evaluate(flag, context, ruleOf(flag, snapshot), { trace: true, timestamp: at })
      if (flag.rollout === undefined || !isEnabled(flag)) return result
      // where the rollout stands, in front of the steps of its rule
      const { percent, step, steps } = rolloutAt(flag.rollout, at)
      return { ...result, trace: [{ kind: 'rollout', variant: flag.rollout.variant, percent, step, steps }, ...(result.trace ?? [])] }
    },
  }
  return evaluator
}

/** A rule that always fails with `message` (a flag whose rule no longer compiles). */
function failing(message: string): Expr {
  return () => {
    throw new RuleFault(message)
  }
}
