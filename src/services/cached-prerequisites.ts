/**
 * Whether a flag's prerequisites hold, the caching evaluator's way (docs/api.md#prerequisites,
 * docs/performance.md#prerequisites-made-nearly-free): the answers of the plain way
 * (`prerequisite-answers.ts`, which the caching tests hold it to), with nothing made on the way
 * while no required flag is reached by two paths. A prerequisite the context cannot move was decided
 * when the snapshot's plan was made (`prerequisite-plan.ts`); one on a flag with a rule runs that
 * rule and looks the variant it chose up in the variants the plan found satisfying; any other
 * answer is the evaluator's own, kept per outcome where it keeps one.
 */

import type { EvaluationContext } from '../domain/evaluation.ts'
import type { Flag } from '../domain/flag.ts'
import { valueHolds } from '../domain/prerequisite-evaluation.ts'
import type { Requirement } from '../domain/prerequisite-plan.ts'
import type { RuleOutcome } from '../domain/targeting/targeting.ts'
import type { Answer, PlainFlagEvaluator } from './flag-evaluator.ts'
import { prerequisitePlan } from './prerequisite-answers.ts'
import type { ServedSnapshot } from './served-snapshot.ts'

/** How the caching evaluator answers a required flag. */
export interface RequiredAnswers {
  /** Its answer as if its prerequisites held. */
  own(flag: Flag, context: EvaluationContext, served: ServedSnapshot, timestamp: number): Answer
  /** Its default, as when one of its prerequisites does not hold. */
  unmet(flag: Flag, context: EvaluationContext, served: ServedSnapshot): Answer
  /** Its answer when its rule gave `outcome`. */
  ruled(flag: Flag, context: EvaluationContext, served: ServedSnapshot, outcome: RuleOutcome): Answer
}

/** Whether every prerequisite of a flag holds for a context at a second (Unix seconds). */
export type PrerequisiteCheck = (flag: Flag, context: EvaluationContext, served: ServedSnapshot, timestamp: number) => boolean

/** The check over `plain` (which runs rules) and `answers` (see module comment). */
export function prerequisiteCheck(plain: PlainFlagEvaluator, answers: RequiredAnswers): PrerequisiteCheck {
  type Memo = (Answer | undefined)[] | undefined

  const allHold = (requires: readonly Requirement[], context: EvaluationContext, served: ServedSnapshot, at: number, memo: Memo) => {
    for (const r of requires) if (!holds(r, context, served, at, memo)) return false
    return true
  }

  const holds = (r: Requirement, context: EvaluationContext, served: ServedSnapshot, at: number, memo: Memo): boolean => {
    if (r.decided !== undefined) return r.decided
    // undecided: a flag is required (a missing one is decided)
    const node = r.node as NonNullable<Requirement['node']>
    const flag = node.flag
    let answer = node.slot >= 0 ? memo?.[node.slot] : undefined
    if (answer === undefined) {
      const held = !node.enabled || allHold(node.requires, context, served, at, memo)
      if (held && node.ruled) {
        const outcome = plain.outcome(flag, context, served, at)
        // the value of a variant it chose is known: no answer needed (unless another path asks again)
        if (outcome.kind === 'variant' && node.slot < 0) return r.satisfiedBy.has(outcome.variant)
        answer = answers.ruled(flag, context, served, outcome)
      } else answer = held ? answers.own(flag, context, served, at) : answers.unmet(flag, context, served)
      if (memo !== undefined && node.slot >= 0) memo[node.slot] = answer
    }
    const value = answer.result?.value
    return value !== undefined && valueHolds(r.prerequisite, flag, value)
  }

  return (flag, context, served, at) => {
    const plan = prerequisitePlan(flag, served)
    // a required flag two paths lead to is answered once: the only thing an evaluation makes here
    const memo: Memo = plan.slots > 0 ? new Array(plan.slots) : undefined
    return allHold(plan.requires, context, served, at, memo)
  }
}
