/**
 * Prerequisites at evaluation (docs/api.md#prerequisites): a flag's prerequisites hold when each
 * required flag, evaluated for the same context in the same environment (its own rule, rollout and
 * prerequisites), is enabled and answers the value of one of the variants named. The first one that
 * does not hold is what the trace names, with what it answered.
 */

import { type EvaluationResult, isFailure } from './evaluation.ts'
import { builtInVariants, type Flag } from './flag.ts'
import type { Prerequisite } from './prerequisite.ts'
import { sameJson } from './same-json.ts'
import type { PrerequisiteStep } from './targeting/rule-evaluation.ts'

/** A required flag and its answer for the context; `undefined` when the environment serves no such flag. */
export type RequiredAnswer = { flag: Flag; result: EvaluationResult } | undefined

/** Whether `answer` (of the required flag) satisfies `p`: a value, equal to the value of one of the variants named. */
export function prerequisiteHolds(p: Prerequisite, answer: RequiredAnswer): boolean {
  if (answer === undefined || isFailure(answer.result) || answer.result.value === undefined) return false
  return valueHolds(p, answer.flag, answer.result.value)
}

/** Whether `value`, answered by `flag`, satisfies `p`: it equals the value of one of the variants named. */
export function valueHolds(p: Prerequisite, flag: Flag, value: unknown): boolean {
  // the flag's own variants before the built-in ones, as `allVariants` merges them, without merging
  // them on every evaluation (docs/performance.md: this runs for each prerequisite of each answer)
  const own = flag.variants
  let builtIn: Record<string, unknown> | undefined
  for (const name of p.variants) {
    if (own !== undefined && Object.hasOwn(own, name)) {
      if (sameJson(own[name], value)) return true
      continue
    }
    builtIn ??= builtInVariants(flag.type, flag.enumValues)
    if (Object.hasOwn(builtIn, name) && sameJson(builtIn[name], value)) return true
  }
  return false
}

/** What a required flag answered, as a trace step shows it. */
function answeredOf(answer: RequiredAnswer): PrerequisiteStep['answered'] {
  if (answer === undefined) return { errorCode: 'FLAG_NOT_FOUND' }
  const r = answer.result
  if (isFailure(r)) return { errorCode: r.errorCode }
  return {
    ...(r.value !== undefined ? { value: r.value } : {}),
    ...(r.variant !== undefined ? { variant: r.variant } : {}),
    reason: r.reason,
  }
}

/**
 * The first prerequisite of `flag` that does not hold, as a trace step, or `undefined` when all
 * hold; `answer` evaluates a required flag by name. With `steps`, every prerequisite looked at is
 * appended there, held or not.
 */
export function unmetPrerequisite(
  flag: Flag,
  answer: (name: string) => RequiredAnswer,
  steps?: PrerequisiteStep[],
): PrerequisiteStep | undefined {
  for (const p of flag.prerequisites ?? []) {
    const got = answer(p.flag)
    const holds = prerequisiteHolds(p, got)
    if (steps === undefined && holds) continue
    const step: PrerequisiteStep = { kind: 'prerequisite', flag: p.flag, variants: p.variants, holds, answered: answeredOf(got) }
    steps?.push(step)
    if (!holds) return step
  }
  return undefined
}
