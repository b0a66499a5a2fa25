/**
 * "Why this value?" (docs/targeting.md#rules): a flag evaluated for a context with the steps that decided it,
 * each in words a person can read without knowing JsonLogic, and a closing sentence.
 */

import { InvalidError } from '../domain/errors.ts'
import { type EvaluationResult, isFailure } from '../domain/evaluation.ts'
import { isJsonObject } from '../domain/json-object.ts'
import type { Principal } from '../domain/principal.ts'
import { describeStep } from '../domain/targeting/rule-description.ts'
import type { EvaluationService } from '../services/evaluation-service.ts'
import { contextProblem } from './ofrep-context.ts'

/** Why the answer is what it is, as the last step says it. */
function conclusion(r: EvaluationResult): string {
  if (isFailure(r)) return `the rule could not decide (${r.errorDetails}): applications get their own default (OFREP GENERAL)`
  switch (r.reason) {
    case 'DISABLED':
      return 'the flag is disabled: applications get their own default'
    case 'TARGETING_MATCH':
      return `the rule chose variant ${r.variant}: ${JSON.stringify(r.value)}`
    case 'STATIC':
      return `no rule applies: the flag's value ${JSON.stringify(r.value)} is served`
    case 'SPLIT':
      return `the A/B split (chancePercentB) assigns this targetingKey to ${r.variant}`
    case 'DEFAULT': {
      // a prerequisite that did not hold ends the trace: it, not the rule, chose the default (docs/api.md#prerequisites)
      const failed = r.trace?.find((s) => s.kind === 'prerequisite' && !s.holds)
      if (failed?.kind === 'prerequisite') {
        const why = `${failed.flag} did not answer ${failed.variants.map((v) => JSON.stringify(v)).join(' or ')}`
        return r.value === undefined
          ? `${why} and the flag has no default: applications get their own`
          : `${why}: the default ${JSON.stringify(r.value)} is served`
      }
      if (r.value === undefined) return 'no rule chose a variant and the flag has no default: applications get their own'
      return r.trace && r.trace.length > 0
        ? `no rule chose a variant: the default ${JSON.stringify(r.value)} is served`
        : `the flag has no value: its default ${JSON.stringify(r.value)} is served`
    }
  }
}

/** The answer of `POST /api/flags/{name}/evaluate` for the request body `{context?}`. */
export function explainAnswer(
  evaluations: EvaluationService,
  principal: Principal,
  name: string,
  body: unknown,
  env?: string,
): Record<string, unknown> {
  const input = body === undefined || body === null ? {} : body
  if (!isJsonObject(input)) throw new InvalidError('the body is {"context": {...}}', 'body', 'must be a JSON object')
  const context = input.context ?? {}
  if (!isJsonObject(context)) throw new InvalidError('context must be a JSON object', 'context', 'must be a JSON object')
  const why = contextProblem(context)
  if (why) throw new InvalidError(why, 'context', why)
  const result = evaluations.explain(principal, name, context, env)
  const { trace = [], ...answer } = result
  return {
    ...answer,
    trace: [...trace.map((step) => ({ ...step, text: describeStep(step) })), { kind: 'result', text: conclusion(result) }],
  }
}
