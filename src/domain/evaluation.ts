/**
 * Flag evaluation for applications (docs/openfeature.md#ofrep): what a flag resolves to for an evaluation
 * context, and the sticky A/B assignment. Pure: the same flag and context always give the same
 * answer, on every replica, so the bulk ETag can be computed without evaluating anything.
 *
 * The assignment is OpenFeature flagd's `fractional` (v2) for two buckets: MurmurHash3 x86 32-bit
 * (seed 0) of the UTF-8 bytes of `flagName + targetingKey`, scaled into 100,000 buckets; A takes the
 * first `100000 − round(chancePercentB × 1000)`. Raising `chancePercentB` only moves users from A to
 * B, and a user's bucket never changes while the flag's name does not.
 */

import { answerVariant } from './answer-variant.ts'
import { allVariants, type Flag, type FlagType, type FlagValue, isEnabled, type MetadataValue } from './flag.ts'
import { lifecycleMetadata } from './flag-lifecycle.ts'
import { servedTargeting } from './rollout.ts'
import type { Expr } from './targeting/compiled-expr.ts'
import type { TraceStep } from './targeting/rule-evaluation.ts'
import { type RuleOutcome, type RunOptions, runRule } from './targeting/targeting.ts'

/** Why a value was chosen (OpenFeature resolution reasons). */
export type EvaluationReason = 'STATIC' | 'DEFAULT' | 'SPLIT' | 'TARGETING_MATCH' | 'DISABLED'

/** What OFREP's `metadata` carries: the flag's own, with `type` and `revision` (these win a clash). */
export type EvaluationMetadata = Record<string, MetadataValue> & { type: FlagType; revision: number }

/**
 * A successful evaluation. `value` and `variant` are absent when the application's own default
 * applies: a disabled flag (`DISABLED`), or one with no default (`DEFAULT`, docs/targeting.md#flagd-format).
 */
export interface Evaluation {
  key: string
  value?: FlagValue
  reason: EvaluationReason
  variant?: string
  metadata: EvaluationMetadata
}

/** An evaluation the rule could not decide (OFREP `GENERAL`): the SDK serves its own default. */
export interface EvaluationFailure {
  key: string
  errorCode: 'GENERAL'
  errorDetails: string
}

/** Either outcome, with the trace when one was asked for. */
export type EvaluationResult = (Evaluation | EvaluationFailure) & { trace?: TraceStep[] }

/** True when `r` is a failure. */
export const isFailure = (r: Evaluation | EvaluationFailure): r is EvaluationFailure => 'errorCode' in r

/** The evaluation context as the protocol sends it. */
export type EvaluationContext = Record<string, unknown>

const BUCKETS = 100_000
const TWO_POW_32 = 2 ** 32

/**
 * The targeting key of a context: a non-empty string, or `undefined` when there is none to split on
 * (absent, empty, or not a string).
 */
export function targetingKeyOf(context: EvaluationContext): string | undefined {
  const key = context.targetingKey
  return typeof key === 'string' && key.length > 0 ? key : undefined
}

/** The bucket (0–99,999) of a user for a flag: flagd's `fractional` bucketing over 100,000 weights. */
export function splitBucket(flagName: string, targetingKey: string): number {
  const hash = Bun.hash.murmur32v3(flagName + targetingKey, 0) // unsigned; strings are hashed as UTF-8
  return Math.floor((hash * BUCKETS) / TWO_POW_32)
}

/** The A/B variant of a user: `A` below `100000 − round(chancePercentB × 1000)`, else `B`. */
export function splitVariant(flagName: string, targetingKey: string, chancePercentB: number): 'A' | 'B' {
  const weightB = Math.round(chancePercentB * 1000)
  return splitBucket(flagName, targetingKey) < BUCKETS - weightB ? 'A' : 'B'
}

/** The metadata of an answer about `flag`: its own, its kind, owner and tags as the flagd export writes them, `type` and `revision`. */
export function metadataOf(flag: Flag): EvaluationMetadata {
  const own =
    flag.kind === undefined && flag.owner === undefined && flag.tags === undefined
      ? flag.metadata
      : { ...flag.metadata, ...lifecycleMetadata(flag) }
  return own
    ? ({ ...own, type: flag.type, revision: flag.servedRevision ?? flag.revision } as EvaluationMetadata)
    : ({ type: flag.type, revision: flag.servedRevision ?? flag.revision } as EvaluationMetadata)
}

/** The flag's answer without targeting (the table of docs/openfeature.md#ofrep), with `reason` overridden when given. */
function untargeted(flag: Flag, context: EvaluationContext, metadata: EvaluationMetadata, reason?: EvaluationReason): Evaluation {
  const key = flag.name
  // an unpinned A/B test splits by the targeting key; every other answer is the flag's own
  const targetingKey = flag.type === 'AB-TEST' && !flag.valueExists ? targetingKeyOf(context) : undefined
  if (targetingKey !== undefined) {
    const variant = splitVariant(flag.name, targetingKey, flag.chancePercentB ?? 50)
    return { key, value: variant, reason: reason ?? 'SPLIT', variant, metadata }
  }
  const answer = answerVariant(flag)
  // no default: the application's own applies (docs/targeting.md#flagd-format)
  if (answer === undefined) return { key, reason: 'DEFAULT', metadata }
  return { key, value: answer.value, reason: reason ?? (flag.valueExists ? 'STATIC' : 'DEFAULT'), variant: answer.variant, metadata }
}

/**
 * The answer of an enabled flag whose prerequisite does not hold (docs/api.md#prerequisites): its
 * default answer, as when its rule names no variant, with `reason: "DEFAULT"`.
 */
export function unmetAnswer(flag: Flag, context: EvaluationContext): Evaluation {
  return untargeted(flag, context, metadataOf(flag), 'DEFAULT')
}

/**
 * Evaluates `flag` for `context` (docs/openfeature.md#ofrep, docs/targeting.md#rules): disabled → `DISABLED`; no rule → the docs/openfeature.md#ofrep
 * table; a rule (compiled once per revision, given as `rule`) → the variant it names
 * (`TARGETING_MATCH`), the docs/openfeature.md#ofrep answer with `DEFAULT` when it names none, or a `GENERAL` failure
 * when it names something that is no variant or cannot be evaluated.
 */
export function evaluate(flag: Flag, context: EvaluationContext, rule: Expr | undefined, options: RunOptions): EvaluationResult {
  if (!isEnabled(flag)) return { key: flag.name, reason: 'DISABLED', metadata: metadataOf(flag) }
  if (rule === undefined || servedTargeting(flag) === undefined) return untargeted(flag, context, metadataOf(flag))
  return answerFor(flag, context, runRule(rule, context, flag.name, options))
}

/**
 * The answer of an enabled flag whose rule gave `outcome` for `context`: the variant it named
 * (`TARGETING_MATCH`), the untargeted answer with `DEFAULT` when it named none, or a `GENERAL`
 * failure when it named something that is no variant or could not be evaluated. Separate from
 * {@link evaluate} so a caller that already ran the rule (to look its answer up) never runs it twice.
 */
export function answerFor(flag: Flag, context: EvaluationContext, outcome: RuleOutcome): EvaluationResult {
  const trace = outcome.trace ? { trace: outcome.trace } : {}
  if (outcome.kind === 'error') return { key: flag.name, errorCode: 'GENERAL', errorDetails: outcome.message, ...trace }
  const metadata = metadataOf(flag)
  if (outcome.kind === 'default') {
    // outside a rollout's share a flag without a rule of its own answers as it does without the
    // rollout, reason included (docs/change-control.md#progressive-rollouts)
    const ruleless = flag.rollout !== undefined && flag.targeting === undefined
    return { ...untargeted(flag, context, metadata, ruleless ? undefined : 'DEFAULT'), ...trace }
  }
  const variants = allVariants(flag)
  if (!Object.hasOwn(variants, outcome.variant))
    return {
      key: flag.name,
      errorCode: 'GENERAL',
      errorDetails: `the rule chose "${outcome.variant}", which is not a variant of this flag`,
      ...trace,
    }
  return {
    key: flag.name,
    value: variants[outcome.variant] as FlagValue,
    reason: 'TARGETING_MATCH',
    variant: outcome.variant,
    metadata,
    ...trace,
  }
}
