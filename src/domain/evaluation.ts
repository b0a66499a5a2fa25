/**
 * Flag evaluation for applications (contract §13): what a flag resolves to for an evaluation
 * context, and the sticky A/B assignment. Pure: the same flag and context always give the same
 * answer, on every replica, so the bulk ETag can be computed without evaluating anything.
 *
 * The assignment is OpenFeature flagd's `fractional` (v2) for two buckets: MurmurHash3 x86 32-bit
 * (seed 0) of the UTF-8 bytes of `flagName + targetingKey`, scaled into 100,000 buckets; A takes the
 * first `100000 − round(chancePercentB × 1000)`. Raising `chancePercentB` only moves users from A to
 * B, and a user's bucket never changes while the flag's name does not.
 */

import type { Flag, FlagType, FlagValue } from './flag.ts'

/** Why a value was chosen (OpenFeature resolution reasons). */
export type EvaluationReason = 'STATIC' | 'DEFAULT' | 'SPLIT'

/** The result of evaluating one flag. */
export interface Evaluation {
  key: string
  value: FlagValue
  reason: EvaluationReason
  variant: string
  metadata: { type: FlagType; revision: number }
}

/** The evaluation context as the protocol sends it; only `targetingKey` matters to flagd's flags. */
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

/** Evaluates `flag` for `context` by the table of contract §13. */
export function evaluate(flag: Flag, context: EvaluationContext): Evaluation {
  const metadata = { type: flag.type, revision: flag.revision }
  if (flag.type !== 'AB-TEST') {
    return flag.valueExists
      ? { key: flag.name, value: flag.value as FlagValue, reason: 'STATIC', variant: 'value', metadata }
      : { key: flag.name, value: flag.defaultValue, reason: 'DEFAULT', variant: 'default', metadata }
  }
  if (flag.valueExists) return { key: flag.name, value: flag.value as FlagValue, reason: 'STATIC', variant: String(flag.value), metadata }
  const targetingKey = targetingKeyOf(context)
  if (targetingKey === undefined)
    return { key: flag.name, value: flag.defaultValue, reason: 'DEFAULT', variant: String(flag.defaultValue), metadata }
  const variant = splitVariant(flag.name, targetingKey, flag.chancePercentB ?? 50)
  return { key: flag.name, value: variant, reason: 'SPLIT', variant, metadata }
}
