/**
 * Prerequisites at evaluation (docs/api.md#prerequisites): the flags a flag requires, through every
 * chain, resolved once per snapshot, and at evaluation each answered at most once, only when needed,
 * so a flag whose prerequisites share others never evaluates one twice: the work is bounded by how
 * many flags the chains reach, not by how many paths lead to them.
 */

import type { EvaluationResult } from '../domain/evaluation.ts'
import type { Flag } from '../domain/flag.ts'
import { type RequiredAnswer, unmetPrerequisite } from '../domain/prerequisite-evaluation.ts'
import { type PrerequisitePlan, planPrerequisites, type RequiredFlag, type Requirement } from '../domain/prerequisite-plan.ts'
import type { PrerequisiteStep } from '../domain/targeting/rule-evaluation.ts'
import type { Answer } from './flag-evaluator.ts'
import type { ServedSnapshot } from './served-snapshot.ts'

/** An answer as the evaluation result it stands for (a failure as OFREP's `GENERAL`). */
export function resultOf(answer: Answer, key: string): EvaluationResult {
  if (answer.result !== undefined) return answer.result
  return { key, errorCode: 'GENERAL', errorDetails: answer.failure?.details ?? 'the rule could not decide' }
}

/**
 * The prerequisites of `flag` resolved against what `served` serves, made once per snapshot and kept
 * while the flag is unchanged: a change to any flag of its chains gives it a new revision, so a new
 * object (docs/api.md#prerequisites).
 */
export function prerequisitePlan(flag: Flag, served: ServedSnapshot): PrerequisitePlan {
  return served.part(
    flag,
    'prerequisite-plan',
    () => planPrerequisites(flag, served.flags),
    () => true,
  )
}

/**
 * The first prerequisite of `flag` that does not hold for the context, or `undefined` when all do
 * (or it has none). `answer(f, held)` answers a required flag `f` for the context: as usual when
 * its own prerequisites `held`, else its default. Each required flag is answered at most once, and
 * only when a prerequisite looked at needs it. With `steps`, each of `flag`'s own prerequisites
 * looked at is appended there. This is the plain way, answering every required flag in full; the
 * caching evaluator has a cheaper one that gives the same answers (`cached-prerequisites.ts`).
 */
export function unmetFor(
  flag: Flag,
  served: ServedSnapshot,
  answer: (f: Flag, held: boolean) => Answer,
  steps?: PrerequisiteStep[],
): PrerequisiteStep | undefined {
  if (flag.prerequisites === undefined) return undefined
  const answers = new Map<RequiredFlag, RequiredAnswer>()
  const answerOf = (node: RequiredFlag | undefined): RequiredAnswer => {
    if (node === undefined) return undefined
    let got = answers.get(node)
    if (got === undefined) {
      const held = !node.enabled || unmetIn(node.flag, node.requires) === undefined
      got = { flag: node.flag, result: resultOf(answer(node.flag, held), node.flag.name) }
      answers.set(node, got)
    }
    return got
  }
  const unmetIn = (f: Flag, requires: readonly Requirement[], trace?: PrerequisiteStep[]) =>
    unmetPrerequisite(f, (name) => answerOf(requires.find((r) => r.prerequisite.flag === name)?.node), trace)
  return unmetIn(flag, prerequisitePlan(flag, served).requires, steps)
}
