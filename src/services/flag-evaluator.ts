/**
 * The plain evaluator (docs/architecture.md#caching): a served snapshot's flags and a context in,
 * answers out, with nothing kept from one request for the next. The caching decorator
 * (`cached-flag-evaluator.ts`) wraps it with the same interface; tests hold the two to the same
 * answers. Each rule is compiled once, by the served snapshot (`served-snapshot.ts`): the compiled
 * rule is part of what a revision serves, like its parsed JSON.
 */

import { canSeeFlag, flagScopeOf, visiblePrefixes } from '../domain/access-policy.ts'
import {
  answerFor,
  type Evaluation,
  type EvaluationContext,
  type EvaluationResult,
  evaluate,
  isFailure,
  unmetAnswer,
} from '../domain/evaluation.ts'
import { type Flag, isEnabled } from '../domain/flag.ts'
import type { Principal } from '../domain/principal.ts'
import { rolloutAt, servedRollout, servedTargeting } from '../domain/rollout.ts'
import type { Expr } from '../domain/targeting/rule-compiler.ts'
import type { PrerequisiteStep } from '../domain/targeting/rule-evaluation.ts'
import { type RuleOutcome, runRule } from '../domain/targeting/targeting.ts'
import type { Snapshot } from '../storage/store.ts'
import { unmetFor } from './prerequisite-answers.ts'
import type { ServedSnapshot, ServedSnapshots } from './served-snapshot.ts'
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

/**
 * An answer: the evaluation (a domain result, for transports that encode it their own way), its OFREP
 * JSON text (encoded once, for those that send it as is) and what usage counts of it; a rule's
 * failure instead of both, thrown where an answer is wanted.
 */
export interface Answer extends CountableAnswer {
  result?: Evaluation
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
  /** What environment `env` (`undefined`: the default one) serves at `snapshot`. */
  served(snapshot: Snapshot, env: string | undefined): ServedSnapshot
  /** One flag's answer; `timestamp` (Unix seconds) is read from the clock when a rule needs it and none is given. */
  one(flag: Flag, context: EvaluationContext, served: ServedSnapshot, timestamp?: number): Answer
  /**
   * Every flag `principal` sees, answered for `context` at `timestamp`. `etag` names this very
   * answer (revision, scope, context, second), so a cache may key it by that.
   */
  all(principal: Principal, context: EvaluationContext, served: ServedSnapshot, timestamp: number | undefined, etag: string): BulkEvaluation
  /** Every flag `principal` sees with its answer for `context` at `timestamp`, in name order. */
  answers(principal: Principal, context: EvaluationContext, served: ServedSnapshot, timestamp: number | undefined): [Flag, Answer][]
  /** What a `304` counts: every flag `principal` sees, as asked for without a known variant. */
  asked(principal: Principal, served: ServedSnapshot): CountedTemplate
  /** One flag evaluated with the trace of its rule. */
  explain(flag: Flag, context: EvaluationContext, served: ServedSnapshot): EvaluationResult
}

/** The parts of the plain evaluator a caching decorator builds on. */
export interface PlainFlagEvaluator extends FlagEvaluator {
  /** The flag's answer as if its prerequisites held (or it has none). */
  own(flag: Flag, context: EvaluationContext, served: ServedSnapshot, timestamp?: number): Answer
  /** The flag's answer when one of its prerequisites does not hold: its default (docs/api.md#prerequisites). */
  unmet(flag: Flag, context: EvaluationContext): Answer
  /** What the flag's rule decides for `context` (the flag has a rule). */
  outcome(flag: Flag, context: EvaluationContext, served: ServedSnapshot, timestamp?: number): RuleOutcome
  /** The answer that follows from an outcome (never running the rule again). */
  answerFrom(flag: Flag, context: EvaluationContext, outcome: RuleOutcome): Answer
  /** The flags `principal` sees, in name order. */
  visible(principal: Principal, served: ServedSnapshot): Flag[]
  /** The second (Unix) rules see now. */
  second(): number
}

/** The answer of an evaluation result. */
export function answerOf(r: EvaluationResult): Answer {
  if (isFailure(r)) return { text: '', variant: '', reason: 'ERROR', failure: new EvaluationFailed(r.key, r.errorDetails) }
  return { result: r, text: JSON.stringify(r), variant: r.variant ?? '', reason: r.reason }
}

/** An answer as an item of OFREP's bulk `flags` array (a failure as an error item). */
export const bulkItem = (answer: Answer): string =>
  answer.failure === undefined
    ? answer.text
    : JSON.stringify({ key: answer.failure.key, errorCode: 'GENERAL', errorDetails: answer.failure.details })

/** True when the flag's answer is the same for every context (a flag with prerequisites never is, unless disabled). */
export const fixedAnswer = (flag: Flag): boolean =>
  !isEnabled(flag) ||
  (servedTargeting(flag) === undefined && !(flag.type === 'AB-TEST' && !flag.valueExists) && flag.prerequisites === undefined)

/** Creates the plain evaluator over served snapshots; `clock` (ms) is the time rules see. */
export function createFlagEvaluator(snapshots: ServedSnapshots, clock: () => number): PlainFlagEvaluator {
  const seconds = () => Math.floor(clock() / 1000)
  const evaluator: PlainFlagEvaluator = {
    served: snapshots.of,
    second: seconds,
    own: (flag, context, served, timestamp) => answerOf(evaluate(flag, context, served.rule(flag), { timestamp: timestamp ?? seconds() })),
    unmet: (flag, context) => answerOf(unmetAnswer(flag, context)),
    one(flag, context, served, timestamp) {
      if (flag.prerequisites === undefined || !isEnabled(flag)) return evaluator.own(flag, context, served, timestamp)
      const at = timestamp ?? seconds()
      const answer = (f: Flag, held: boolean) => (held ? evaluator.own(f, context, served, at) : evaluator.unmet(f, context))
      return answer(flag, unmetFor(flag, served, answer) === undefined)
    },
    outcome: (flag, context, served, timestamp) =>
      runRule(served.rule(flag) as Expr, context, flag.name, { timestamp: timestamp ?? seconds() }),
    answerFrom: (flag, context, outcome) => answerOf(answerFor(flag, context, outcome)),
    visible: (principal, served) =>
      served.under(visiblePrefixes(flagScopeOf(principal), '')).filter((flag) => canSeeFlag(principal, flag.name)),
    answers: (principal, context, served, timestamp) =>
      evaluator.visible(principal, served).map((flag): [Flag, Answer] => [flag, evaluator.one(flag, context, served, timestamp)]),
    all(principal, context, served, timestamp) {
      const answers = evaluator.answers(principal, context, served, timestamp)
      return { flags: `[${answers.map(([, a]) => bulkItem(a)).join(',')}]`, counts: { templates: [], answers } }
    },
    asked: (principal, served) => ({
      fixed: evaluator.visible(principal, served).map((flag) => ({ flag, variant: '', reason: 'NOT_MODIFIED' })),
    }),
    explain(flag, context, served) {
      const at = seconds()
      // its prerequisites first: the one that does not hold, and what it answered, ends the trace
      const required: PrerequisiteStep[] = []
      if (isEnabled(flag)) {
        const answer = (f: Flag, held: boolean) => (held ? evaluator.own(f, context, served, at) : evaluator.unmet(f, context))
        if (unmetFor(flag, served, answer, required) !== undefined) return { ...unmetAnswer(flag, context), trace: required }
      }
      const traced = evaluate(flag, context, served.rule(flag), { trace: true, timestamp: at })
      const result = required.length > 0 ? { ...traced, trace: [...required, ...(traced.trace ?? [])] } : traced
      // a rollout its guard rolled back serves nothing: no step of its own (docs/guarded-rollouts.md#when-a-guard-trips)
      const rollout = flag.rollout
      if (rollout === undefined || !isEnabled(flag) || servedRollout(rollout) === undefined) return result
      // where the rollout stands, in front of the steps of its rule; a paused one where its guard held it
      const halted = rollout.halted
      const { percent, step, steps } = rolloutAt(rollout, halted ? Math.floor(Date.parse(halted.at) / 1000) : at)
      const shown = halted ? { percent: halted.percent, paused: true as const } : { percent }
      const where = { kind: 'rollout' as const, variant: rollout.variant, step, steps, ...shown }
      return { ...result, trace: [where, ...(result.trace ?? [])] }
    },
  }
  return evaluator
}
