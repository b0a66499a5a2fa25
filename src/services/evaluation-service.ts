/**
 * Flag evaluation for applications (docs/openfeature.md#ofrep, docs/targeting.md#rules), over the committed snapshot only, so an
 * evaluation never writes and never sees a change that is not durable.
 *
 * The answers come from an evaluator (`flag-evaluator.ts`, wrapped by its caching decorator in
 * production); this service owns who may ask, the bulk ETag and the `304`, and usage counting. The bulk ETag is computed without evaluating anything: the
 * flags' revision (the store's change sequence, the same on every replica), the caller's scope and
 * the part of the context that can change an answer: the targeting key while no flag has a rule,
 * else the whole context (canonical JSON, so key order does not matter). So a `304` costs a hash and
 * never hides a change.
 */

import { canSeeFlag, flagScopeOf } from '../domain/access-policy.ts'
import { NotFoundError } from '../domain/errors.ts'
import { type EvaluationContext, type EvaluationResult, targetingKeyOf } from '../domain/evaluation.ts'
import type { Flag } from '../domain/flag.ts'
import { environmentOf, type Principal } from '../domain/principal.ts'
import { servedTargeting } from '../domain/rollout.ts'
import { readsClock } from '../domain/targeting/clock-use.ts'
import type { Snapshot, Store } from '../storage/store.ts'
import { requireIn } from './environment-access.ts'
import { flagsIn } from './environment-views.ts'
import type { BulkCounts, FlagEvaluator } from './flag-evaluator.ts'
import type { UsageCounter } from './usage-counter.ts'

/** A bulk evaluation's answer: the flags and their ETag, or `unchanged` with the ETag the caller holds. */
export type BulkAnswer = { unchanged: false; etag: string; flags: string } | { unchanged: true; etag: string }

/** The evaluation use cases. */
export interface EvaluationService {
  /** One flag as JSON text; `NotFoundError` when it does not exist for the caller, `EvaluationFailed` when its rule fails. */
  oneJson(principal: Principal, key: string, context: EvaluationContext): string
  /** One flag evaluated with the trace of its rule (`POST /api/flags/{name}/evaluate`). */
  explain(principal: Principal, key: string, context: EvaluationContext, env?: string): EvaluationResult
  /**
   * Every visible flag for the caller and context, as the JSON text of the `flags` array (failures
   * as error items) with the ETag it matches; or only the ETag when `current(etag)` says the caller
   * holds it already (a `304`: nothing is evaluated, and the flags count as asked for). The caller's
   * permission is checked and the ETag computed once.
   */
  bulk(principal: Principal, context: EvaluationContext, current: (etag: string) => boolean): BulkAnswer
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
 * The flags as `env` sees them (`undefined`: the default environment, `fallback`): views, which
 * carry the revision each one last saw the flag change at (`metadata.revision`).
 */
const flagsOf = (snapshot: Snapshot, env: string | undefined, fallback: string) => flagsIn(snapshot, env ?? fallback)

// per view map (one per snapshot and environment): what its bulk ETags start with
const servedTags = new WeakMap<ReadonlyMap<string, Flag>, string>()

/**
 * What an environment's bulk ETags start with (docs/environments.md#revisions): the flags' revision
 * while there is one environment (every change is its own);
 * otherwise a tag of what the environment serves (how many flags, the newest revision it saw change,
 * and a digest of each flag's id and that revision), so a change confined to another environment
 * leaves it, and every replica computes the same one from the same rows.
 */
function servedTag(snapshot: Snapshot, env: string | undefined, fallback: string): string {
  const views = flagsOf(snapshot, env, fallback)
  let tag = servedTags.get(views)
  if (tag !== undefined) return tag
  if (snapshot.environments.size <= 1) tag = String(snapshot.revisionOf('flags'))
  else {
    let newest = 0
    let digest = 0
    for (const flag of views.values()) {
      const served = flag.servedRevision ?? flag.revision
      if (served > newest) newest = served
      digest = (digest ^ Bun.hash.crc32(`${flag.id}:${served}`)) >>> 0
    }
    tag = `e${newest}.${views.size}.${digest.toString(36)}`
  }
  servedTags.set(views, tag)
  return tag
}

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
  // whether any flag has a rule, per flags revision (then the whole context counts for the ETag),
  // and which read the clock (then the second counts too: their answers move with time)
  let targeted = { revision: -1, byEnv: new Map<string, { any: boolean; clocked: Set<string> }>() }
  const seconds = () => Math.floor(clock() / 1000)

  // per environment: its views may differ in their rules
  const targetingOf = (snapshot: Snapshot, env: string | undefined) => {
    const revision = snapshot.revisionOf('flags')
    if (targeted.revision !== revision) targeted = { revision, byEnv: new Map() }
    const key = env ?? ''
    let known = targeted.byEnv.get(key)
    if (known === undefined) {
      let any = false
      const clocked = new Set<string>()
      const segments = snapshot.segmentRules()
      for (const flag of flagsOf(snapshot, env, environment).values()) {
        const rule = servedTargeting(flag)
        if (rule !== undefined) {
          any = true
          if (readsClock(rule, segments)) clocked.add(flag.name)
        }
      }
      targeted.byEnv.set(key, (known = { any, clocked }))
    }
    return known
  }
  // the second the answers of `principal` are made in, when a flag it sees reads the clock
  const clockOf = (principal: Principal, snapshot: Snapshot): number | undefined => {
    const { clocked } = targetingOf(snapshot, envOf(principal))
    if (clocked.size === 0) return undefined
    for (const name of clocked) if (canSeeFlag(principal, name)) return seconds()
    return undefined
  }
  const tagOf = (principal: Principal, context: EvaluationContext, snapshot: Snapshot, second: number | undefined): string => {
    const revision = servedTag(snapshot, envOf(principal), environment)
    const scope = flagScopeOf(principal)
    const env = envOf(principal)
    const whole = targetingOf(snapshot, env).any
    const key = whole ? undefined : targetingKeyOf(context)
    const at = second === undefined ? '' : `@${second}`
    if (env === undefined && scope.length === 0 && key === undefined && (!whole || Object.keys(context).length === 0))
      return `"${revision}${at}"`
    const counted = whole ? canonicalJson(context) : (key ?? '')
    const digest = Bun.hash.wyhash(`${env ?? ''}\u0001${scope.join('\n')}\u0000${counted}`, 0n).toString(36)
    return `"${revision}-${digest}${at}"`
  }
  const visibleFlag = (principal: Principal, key: string, snapshot: Snapshot, env = envOf(principal)): Flag => {
    const flag = canSeeFlag(principal, key) ? flagsOf(snapshot, env, environment).get(key) : undefined
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
    oneJson(principal, key, context) {
      const snapshot = store.committed()
      requireIn(principal, 'flag:evaluate', envOf(principal) ?? environment)
      const flag = visibleFlag(principal, key, snapshot)
      const answer = evaluator.one(flag, context, snapshot)
      counter?.countAnswer(flag, answer)
      if (answer.failure) throw answer.failure
      return answer.text
    },

    explain(principal, key, context, env = envOf(principal)) {
      const snapshot = store.committed()
      if (env !== undefined && !snapshot.environments.has(env)) throw new NotFoundError(`no environment named ${JSON.stringify(env)}`)
      requireIn(principal, 'flag:read', env ?? environment)
      return evaluator.explain(visibleFlag(principal, key, snapshot, env), context, snapshot)
    },

    bulk(principal, context, current) {
      const snapshot = store.committed()
      requireIn(principal, 'flag:evaluate', envOf(principal) ?? environment)
      // one second for the ETag and every rule of the answer, so the answer is the one its ETag names
      const second = clockOf(principal, snapshot)
      const etag = tagOf(principal, context, snapshot, second)
      if (current(etag)) {
        // a 304 re-sends nothing, so no variant is known: the flags count as asked for, without one
        if (counter) counter.countTemplate(evaluator.asked(principal, snapshot))
        return { unchanged: true, etag }
      }
      const { flags, counts } = evaluator.all(principal, context, snapshot, second, etag)
      count(counts)
      return { unchanged: false, etag, flags }
    },

    revision: () => store.committed().revisionOf('flags'),
  }
}
