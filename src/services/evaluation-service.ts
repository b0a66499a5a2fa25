/**
 * Flag evaluation for applications (docs/openfeature.md#ofrep, docs/targeting.md#rules), over the committed snapshot only, so an
 * evaluation never writes and never sees a change that is not durable.
 *
 * The answers come from an evaluator (`flag-evaluator.ts`, wrapped by its caching decorator in
 * production) over the served snapshot of the caller's environment (`served-snapshot.ts`); this
 * service owns who may ask, the bulk ETag and the `304`, and usage counting. Answers are domain
 * results (with their OFREP text made once, for the transports that send it as is). The bulk ETag is computed without evaluating anything: the
 * flags' revision (the store's change sequence, the same on every replica), the caller's scope and
 * the part of the context that can change an answer: the targeting key while no flag has a rule,
 * else the whole context (canonical JSON, so key order does not matter). So a `304` costs a hash and
 * never hides a change.
 */

import { canSeeFlag, flagScopeOf } from '../domain/access-policy.ts'
import { NotFoundError } from '../domain/errors.ts'
import { type Evaluation, type EvaluationContext, type EvaluationResult, targetingKeyOf } from '../domain/evaluation.ts'
import type { Flag } from '../domain/flag.ts'
import { environmentOf, type Principal } from '../domain/principal.ts'
import type { Store } from '../storage/store.ts'
import { requireIn } from './environment-access.ts'
import type { Answer, BulkCounts, FlagEvaluator } from './flag-evaluator.ts'
import type { ServedSnapshot } from './served-snapshot.ts'
import type { UsageCounter } from './usage-counter.ts'

/** One flag's successful answer: the evaluation, and its OFREP JSON text (made once per outcome). */
export type EvaluationAnswer = Answer & { result: Evaluation }

/** A bulk evaluation's answer: the flags and their ETag, or `unchanged` with the ETag the caller holds. */
export type BulkAnswer = { unchanged: false; etag: string; flags: string } | { unchanged: true; etag: string }

/** The evaluation use cases. */
export interface EvaluationService {
  /** One flag's answer; `NotFoundError` when it does not exist for the caller, `EvaluationFailed` when its rule fails. */
  one(principal: Principal, key: string, context: EvaluationContext): EvaluationAnswer
  /** One flag evaluated with the trace of its rule (`POST /api/flags/{name}/evaluate`). */
  explain(principal: Principal, key: string, context: EvaluationContext, env?: string): EvaluationResult
  /**
   * Every visible flag for the caller and context, as the JSON text of the `flags` array (failures
   * as error items) with the ETag it matches; or only the ETag when `current(etag)` says the caller
   * holds it already (a `304`: nothing is evaluated, and the flags count as asked for). The caller's
   * permission is checked and the ETag computed once.
   */
  bulk(principal: Principal, context: EvaluationContext, current: (etag: string) => boolean): BulkAnswer
  /** Every visible flag's answer for the caller and context, in name order (failures as `failure`), without an ETag. */
  all(principal: Principal, context: EvaluationContext): [Flag, Answer][]
  /** The flags' revision: what every stream and ETag of evaluations moves with. */
  revision(): number
}

/**
 * JSON with object keys sorted, so equal contexts give equal text whatever their key order. Numbers
 * JSON cannot write (`1e400` parses to Infinity) are written as JavaScript does, so they never read
 * as `null`: a rule tells them apart, so the ETag must.
 */
export function canonicalJson(v: unknown): string {
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v)
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null'
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`
  const keys = Object.keys(v).sort()
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`).join(',')}}`
}

/** The environment a principal evaluates (`undefined`: the default one). */
const envOf = environmentOf

/**
 * Creates the service over the store and an evaluator (the cached one in production); `clock`
 * (milliseconds) is the time rules see as `$flagd.timestamp`; `environment`: the default one, which
 * a caller not confined to an environment evaluates.
 */
export function createEvaluationService(
  store: Store,
  evaluator: FlagEvaluator,
  counter: UsageCounter | undefined,
  clock: () => number,
  environment: string,
): EvaluationService {
  const seconds = () => Math.floor(clock() / 1000)
  const servedFor = (principal: Principal): ServedSnapshot => evaluator.served(store.committed(), envOf(principal) ?? environment)

  // the second the answers of `principal` are made in, when a flag it sees reads the clock
  const clockOf = (principal: Principal, served: ServedSnapshot): number | undefined => {
    const { clocked } = served
    if (clocked.size === 0) return undefined
    for (const name of clocked) if (canSeeFlag(principal, name)) return seconds()
    return undefined
  }
  const tagOf = (principal: Principal, context: EvaluationContext, served: ServedSnapshot, second: number | undefined): string => {
    const revision = served.tag
    const scope = flagScopeOf(principal)
    const env = envOf(principal)
    const whole = served.targeted
    const key = whole ? undefined : targetingKeyOf(context)
    const at = second === undefined ? '' : `@${second}`
    if (env === undefined && scope.length === 0 && key === undefined && (!whole || Object.keys(context).length === 0))
      return `"${revision}${at}"`
    const counted = whole ? canonicalJson(context) : (key ?? '')
    const digest = Bun.hash.wyhash(`${env ?? ''}\u0001${scope.join('\n')}\u0000${counted}`, 0n).toString(36)
    return `"${revision}-${digest}${at}"`
  }
  const visibleFlag = (principal: Principal, key: string, served: ServedSnapshot): Flag => {
    const flag = canSeeFlag(principal, key) ? served.flags.get(key) : undefined
    if (!flag) throw new NotFoundError(`no flag named ${JSON.stringify(key)}`)
    return flag
  }
  // answers are counted where they are given to a caller
  const count = (counts: BulkCounts) => {
    if (!counter) return
    for (const template of counts.templates) if (template.fixed.length > 0) counter.countTemplate(template)
    for (const [flag, answer] of counts.answers) counter.countAnswer(flag, answer)
  }

  return {
    one(principal, key, context) {
      const served = servedFor(principal)
      requireIn(principal, 'flag:evaluate', envOf(principal) ?? environment)
      const flag = visibleFlag(principal, key, served)
      const answer = evaluator.one(flag, context, served)
      counter?.countAnswer(flag, answer)
      if (answer.failure) throw answer.failure
      return answer as EvaluationAnswer
    },

    explain(principal, key, context, env = envOf(principal)) {
      const snapshot = store.committed()
      if (env !== undefined && !snapshot.environments.has(env)) throw new NotFoundError(`no environment named ${JSON.stringify(env)}`)
      requireIn(principal, 'flag:read', env ?? environment)
      const served = evaluator.served(snapshot, env ?? environment)
      const result = evaluator.explain(visibleFlag(principal, key, served), context, served)
      // a required flag outside the caller's flagPrefixes: whether it held, never what it answered
      // (docs/api.md#prerequisites)
      if (!result.trace?.some((s) => s.kind === 'prerequisite' && !canSeeFlag(principal, s.flag))) return result
      const trace = result.trace.map((s) => (s.kind === 'prerequisite' && !canSeeFlag(principal, s.flag) ? { ...s, answered: {} } : s))
      return { ...result, trace }
    },

    bulk(principal, context, current) {
      const served = servedFor(principal)
      requireIn(principal, 'flag:evaluate', envOf(principal) ?? environment)
      // one second for the ETag and every rule of the answer, so the answer is the one its ETag names
      const second = clockOf(principal, served)
      const etag = tagOf(principal, context, served, second)
      if (current(etag)) {
        // a 304 re-sends nothing, so no variant is known: the flags count as asked for, without one
        if (counter) counter.countTemplate(evaluator.asked(principal, served))
        return { unchanged: true, etag }
      }
      const { flags, counts } = evaluator.all(principal, context, served, second, etag)
      count(counts)
      return { unchanged: false, etag, flags }
    },

    all(principal, context) {
      const served = servedFor(principal)
      requireIn(principal, 'flag:evaluate', envOf(principal) ?? environment)
      const answers = evaluator.answers(principal, context, served, clockOf(principal, served))
      count({ templates: [], answers })
      return answers
    },

    revision: () => store.committed().revisionOf('flags'),
  }
}
