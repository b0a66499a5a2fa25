/**
 * Cross-checking helpers: a flagd-format flag evaluated by OpenFeature's own evaluator
 * (`@openfeature/flagd-core`) and by flagd's engine, as resolution details that can be compared.
 */

import { FlagdCore } from '@openfeature/flagd-core'
import { compileRule } from '../../src/domain/targeting/rule-compiler.ts'
import { clampFractionalWeights, runRule } from '../../src/domain/targeting/targeting.ts'

/** A flag of a flagd document. */
export interface FlagdFlag {
  state: 'ENABLED' | 'DISABLED'
  variants: Record<string, unknown>
  defaultVariant?: string | null
  targeting?: unknown
}

/** What an evaluation resolved to, in OpenFeature's terms. */
export interface Resolution {
  value?: unknown
  variant?: string
  reason: string
  errorCode?: string
}

const quiet = { error() {}, warn() {}, info() {}, debug() {} }
// one evaluator per document: loading one validates it against flagd's schema, which takes milliseconds
const loaded = new WeakMap<object, FlagdCore>()

/** OpenFeature's answer for `key` of `document` (flagd JSON) in `context`. */
export function oracle(
  document: { flags: Record<string, unknown>; $evaluators?: Record<string, unknown> },
  key: string,
  context: Record<string, unknown>,
): Resolution {
  let core = loaded.get(document)
  if (!core) {
    core = new FlagdCore(undefined, quiet)
    core.setConfigurations(JSON.stringify(document))
    loaded.set(document, core)
  }
  const flag = core.getFlag(key)
  if (!flag) return { reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND' }
  if (flag.state === 'DISABLED') {
    const kind = typeof [...flag.variants.values()][0]
    const type = kind === 'boolean' ? 'boolean' : kind === 'number' ? 'number' : kind === 'string' ? 'string' : 'object'
    // the value is the caller's own default: flagd-core gives no variant
    return { reason: (core.resolve(type, key, null as never, context as never, quiet) as { reason: string }).reason }
  }
  const r = flag.evaluate(context as never, quiet) as { value?: unknown; variant?: string; reason: string; errorCode?: string }
  return {
    ...(r.value === undefined ? {} : { value: r.value }),
    ...(r.variant === undefined ? {} : { variant: r.variant }),
    reason: r.reason,
    ...(r.errorCode ? { errorCode: r.errorCode } : {}),
  }
}

/** flagd's engine's answer for the same flag. */
export function ours(flag: FlagdFlag, key: string, context: Record<string, unknown>, segments: Record<string, unknown> = {}): Resolution {
  const defaultAnswer = (reason: string): Resolution => {
    const dv = flag.defaultVariant
    if (dv === null || dv === undefined) return { reason: 'DEFAULT' }
    return { value: flag.variants[dv], variant: dv, reason }
  }
  if (flag.state === 'DISABLED') return { reason: 'DISABLED' }
  if (
    flag.targeting === undefined ||
    (typeof flag.targeting === 'object' && flag.targeting !== null && Object.keys(flag.targeting).length === 0)
  )
    return defaultAnswer('STATIC')
  const { expr, problems } = compileRule(clampFractionalWeights(flag.targeting).rule, { segments: new Map(Object.entries(segments)) })
  if (problems.length > 0) return { reason: 'ERROR', errorCode: 'PARSE_ERROR' }
  // flagd-core reads the real clock for $flagd.timestamp; this side is told the same moment
  const outcome = runRule(expr, context, key, { timestamp: Math.floor(Date.now() / 1000) })
  if (outcome.kind === 'error') return { reason: 'ERROR', errorCode: 'GENERAL' }
  if (outcome.kind === 'default') return defaultAnswer('DEFAULT')
  if (!Object.hasOwn(flag.variants, outcome.variant)) return { reason: 'ERROR', errorCode: 'GENERAL' }
  return { value: flag.variants[outcome.variant], variant: outcome.variant, reason: 'TARGETING_MATCH' }
}
