/**
 * Prerequisites at evaluation, for both evaluators (docs/api.md#prerequisites): the flags a flag
 * requires, through every chain, each answered once per evaluation, deepest first, so a flag whose
 * prerequisites share others never evaluates one twice: the work is bounded by how many flags the
 * chains reach, not by how many paths lead to them.
 */

import type { EvaluationResult } from '../domain/evaluation.ts'
import { type Flag, isEnabled } from '../domain/flag.ts'
import { type RequiredAnswer, unmetPrerequisite } from '../domain/prerequisite-evaluation.ts'
import type { PrerequisiteStep } from '../domain/targeting/rule-evaluation.ts'
import type { Answer } from './flag-evaluator.ts'
import type { ServedSnapshot } from './served-snapshot.ts'

/** An answer as the evaluation result it stands for (a failure as OFREP's `GENERAL`). */
export function resultOf(answer: Answer, key: string): EvaluationResult {
  if (answer.result !== undefined) return answer.result
  return { key, errorCode: 'GENERAL', errorDetails: answer.failure?.details ?? 'the rule could not decide' }
}

/** The flags `flag` requires through any chain, as the environment serves them, deepest first (made once per snapshot). */
function requiredInOrder(flag: Flag, served: ServedSnapshot): Flag[] {
  return served.part(
    flag,
    'prerequisite-order',
    () => {
      const out: Flag[] = []
      const seen = new Set<string>([flag.name])
      const visit = (f: Flag) => {
        for (const p of f.prerequisites ?? []) {
          if (seen.has(p.flag)) continue
          seen.add(p.flag)
          const required = served.flags.get(p.flag)
          if (required === undefined) continue
          visit(required)
          out.push(required)
        }
      }
      visit(flag)
      return out
    },
    () => true,
  )
}

/**
 * The first prerequisite of `flag` that does not hold for the context, or `undefined` when all do
 * (or it has none). `answer(f, held)` answers a required flag `f` for the context: as usual when
 * its own prerequisites `held`, else its default. With `steps`, each of `flag`'s own prerequisites
 * looked at is appended there.
 */
export function unmetFor(
  flag: Flag,
  served: ServedSnapshot,
  answer: (f: Flag, held: boolean) => Answer,
  steps?: PrerequisiteStep[],
): PrerequisiteStep | undefined {
  if (flag.prerequisites === undefined) return undefined
  const answers = new Map<string, RequiredAnswer>()
  const lookup = (name: string) => answers.get(name)
  for (const f of requiredInOrder(flag, served)) {
    const held = !isEnabled(f) || unmetPrerequisite(f, lookup) === undefined
    answers.set(f.name, { flag: f, result: resultOf(answer(f, held), f.name) })
  }
  return unmetPrerequisite(flag, lookup, steps)
}
