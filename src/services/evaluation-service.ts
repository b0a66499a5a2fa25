/**
 * Flag evaluation for applications (docs/openfeature.md#ofrep, docs/targeting.md#rules), over the committed snapshot only, so an
 * evaluation never writes and never sees a change that is not durable.
 *
 * Rules are compiled once per flag revision (a stored flag row never changes; a new revision is a
 * new row), and answers that cannot depend on the context (no rule, not an unpinned A/B test, or
 * disabled) are serialized once per row. The bulk ETag is computed without evaluating anything: the
 * flags' revision (the store's change sequence, the same on every replica), the caller's scope and
 * the part of the context that can change an answer: the targeting key while no flag has a rule,
 * else the whole context (canonical JSON, so key order does not matter). So a `304` costs a hash and
 * never hides a change.
 */

import { canSeeFlag, flagScopeOf, requirePermission, visiblePrefixes } from '../domain/access-policy.ts'
import { BoundedMap } from '../domain/bounded-map.ts'
import { NotFoundError } from '../domain/errors.ts'
import { answerFor, type EvaluationContext, type EvaluationResult, evaluate, isFailure, targetingKeyOf } from '../domain/evaluation.ts'
import { type Flag, isEnabled } from '../domain/flag.ts'
import type { Principal } from '../domain/principal.ts'
import { readsClock } from '../domain/targeting/clock-use.ts'
import { RuleFault } from '../domain/targeting/json-logic-values.ts'
import { compileRule, type Expr } from '../domain/targeting/rule-compiler.ts'
import { runRule } from '../domain/targeting/targeting.ts'
import { TextCache } from '../domain/text-cache.ts'
import type { Snapshot, Store } from '../storage/store.ts'
import type { FlagReadModel } from './flag-read-model.ts'
import type { CountableAnswer, CountedTemplate, UsageCounter } from './usage-counter.ts'

/** Bulk answers kept across requests: at most 32 Mi characters (about 64 MB) in all. */
export const BULK_CACHE_CHARS = 32 * 1024 * 1024
/** Bulk templates (the context-free part of each scope's answer) kept for the newest revision: 16 Mi characters. */
const TEMPLATE_CHARS = 16 * 1024 * 1024

/** A flag's rule could not decide for this context (OFREP `GENERAL`). */
export class EvaluationFailed extends Error {
  constructor(
    readonly key: string,
    readonly details: string,
  ) {
    super(details)
  }
}

/** A bulk evaluation's answer: the flags and their ETag, or `unchanged` with the ETag the caller holds. */
export type BulkAnswer = { unchanged: false; etag: string; flags: string } | { unchanged: true; etag: string }

/** The evaluation use cases. */
export interface EvaluationService {
  /** One flag as JSON text; `NotFoundError` when it does not exist for the caller, `EvaluationFailed` when its rule fails. */
  oneJson(principal: Principal, key: string, context: EvaluationContext): string
  /** One flag evaluated with the trace of its rule (`POST /api/flags/{name}/evaluate`). */
  explain(principal: Principal, key: string, context: EvaluationContext): EvaluationResult
  /**
   * Every visible flag for the caller and context, as the JSON text of the `flags` array (failures
   * as error items) with the ETag it matches; or only the ETag when `current(etag)` says the caller
   * holds it already (a `304`: nothing is evaluated, and the flags count as asked for). The caller's
   * permission is checked and the ETag computed once.
   */
  bulk(principal: Principal, context: EvaluationContext, current: (etag: string) => boolean): BulkAnswer
  /** The flags' revision: what every stream and ETag of evaluations moves with. */
  revision(): number
  /** What the cache of bulk answers holds now (bounded by `BULK_CACHE_CHARS`). */
  bulkCacheSize(): { entries: number; chars: number }
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

/** A scope's bulk answer without a context: the fixed answers in runs, the flags to evaluate between. */
interface Template {
  parts: (string | Flag)[]
  /** The fixed answers, for usage: a bulk answer counts them with one increment. */
  counted: CountedTemplate
}

/** An answer as text with what usage counts of it; a rule's failure is thrown where text is wanted. */
interface Answer extends CountableAnswer {
  text: string
  failure?: EvaluationFailed
}

/** The answer of an evaluation result. */
function answerOf(r: EvaluationResult): Answer {
  if (isFailure(r)) return { text: '', variant: '', reason: 'ERROR', failure: new EvaluationFailed(r.key, r.errorDetails) }
  return { text: JSON.stringify(r), variant: r.variant ?? '', reason: r.reason }
}

const NOTHING_RULED: CountedTemplate = { fixed: [] }

/** True when the flag's answer is the same for every context. */
const fixedAnswer = (flag: Flag) => !isEnabled(flag) || (flag.targeting === undefined && !(flag.type === 'AB-TEST' && !flag.valueExists))

/**
 * Creates the service over the store and the flags' read model; `clock` (milliseconds) is the time
 * rules see as `$flagd.timestamp`.
 */
export function createEvaluationService(
  store: Store,
  read: FlagReadModel,
  counter?: UsageCounter,
  clock: () => number = Date.now,
): EvaluationService {
  // context-free answers serialised once per stored row
  const fixed = new WeakMap<Flag, Answer>()
  // each rule compiled once per stored row (a new revision is a new row)
  const rules = new WeakMap<Flag, Expr>()
  // whole bulk answers by ETag: pollers with the same context share one rendering per revision;
  // bounded by size (32 Mi characters, about 64 MB), since one answer of many flags may be megabytes
  // each kept with the outcomes of its flags with rules, for usage (a kept answer is served again
  // without evaluating them)
  const bulk = new TextCache<string, CountedTemplate>(BULK_CACHE_CHARS)
  // each scope's flags as asked for by a 304 (no variant known), per template
  const asked = new WeakMap<Template, CountedTemplate>()
  const unanswered = (template: Template): CountedTemplate => {
    let known = asked.get(template)
    if (known === undefined) {
      const flags = template.parts.flatMap((p) => (typeof p === 'string' ? [] : [p])).concat(template.counted.fixed.map((f) => f.flag))
      asked.set(template, (known = { fixed: flags.map((flag) => ({ flag, variant: '', reason: 'NOT_MODIFIED' })) }))
    }
    return known
  }
  // the bulk ETags asked for lately (bounded), to know which contexts repeat
  const seen = new BoundedMap<string, true>(10_000)
  // whether any flag has a rule, per flags revision (then the whole context counts for the ETag),
  // and which read the clock (then the second counts too: their answers move with time)
  let targeted = { revision: -1, any: false, clocked: new Set<string>() }
  const seconds = () => Math.floor(clock() / 1000)

  const ruleOf = (flag: Flag, snapshot: Snapshot): Expr | undefined => {
    if (flag.targeting === undefined) return undefined
    let expr = rules.get(flag)
    if (!expr) {
      // validated at write, so problems here mean a segment went missing since: evaluation fails
      const compiled = compileRule(flag.targeting, { segments: snapshot.segmentRules() })
      expr = compiled.problems.length === 0 ? compiled.expr : failing(compiled.problems.map((p) => `${p.field}: ${p.reason}`).join('; '))
      rules.set(flag, expr)
    }
    return expr
  }
  // `timestamp` (Unix seconds) is read from the clock only when a rule runs and none was given
  const result = (flag: Flag, context: EvaluationContext, snapshot: Snapshot, timestamp?: number, trace = false) =>
    evaluate(flag, context, ruleOf(flag, snapshot), { trace, timestamp: timestamp ?? seconds() })
  // a rule's answers as text per outcome (the variant it chose, or the default): the same for
  // every context that reaches it, so an evaluation runs the rule and looks its answer up; the
  // answers that depend on the targeting key (an A/B split) are made each time. Only the flag's own
  // variants are kept (a rule may return any text of the context, which is an error, never kept),
  // so a flag keeps at most one answer per variant, plus its default.
  const outcomes = new WeakMap<Flag, Map<string, Answer>>()
  const ruledAnswer = (flag: Flag, context: EvaluationContext, snapshot: Snapshot, timestamp?: number): Answer => {
    const expr = ruleOf(flag, snapshot) as Expr
    const outcome = runRule(expr, context, flag.name, { timestamp: timestamp ?? seconds() })
    const key =
      outcome.kind === 'variant' ? `v\u0000${outcome.variant}` : outcome.kind === 'default' && flag.type !== 'AB-TEST' ? 'd' : undefined
    let answers = outcomes.get(flag)
    const known = key === undefined ? undefined : answers?.get(key)
    if (known !== undefined) return known
    // the full evaluation from the outcome (never running the rule twice: its answer is fixed now)
    const answer = answerOf(answerFor(flag, context, outcome))
    if (key !== undefined && answer.failure === undefined) {
      if (!answers) outcomes.set(flag, (answers = new Map()))
      answers.set(key, answer)
    }
    return answer
  }
  const one = (flag: Flag, context: EvaluationContext, snapshot: Snapshot, timestamp?: number): Answer => {
    if (!fixedAnswer(flag)) {
      if (flag.targeting !== undefined) return ruledAnswer(flag, context, snapshot, timestamp)
      return answerOf(result(flag, context, snapshot, timestamp))
    }
    let answer = fixed.get(flag)
    if (answer === undefined) fixed.set(flag, (answer = answerOf(result(flag, {}, snapshot, timestamp))))
    return answer
  }
  // an answer is counted where it is given to a caller (a template is built without counting)
  const counted = (flag: Flag, answer: Answer): Answer => {
    counter?.countAnswer(flag, answer)
    return answer
  }
  // the bulk answer of a scope at a revision as a template: the answers that are the same for every
  // context joined into runs, the flags whose answer depends on it in between; kept for the newest
  // revision only, and only while small (at most TEMPLATE_CHARS in all)
  let templates = { revision: -1, chars: 0, byScope: new Map<string, Template>() }
  const templateOf = (principal: Principal, snapshot: Snapshot): Template => {
    const revision = snapshot.revisionOf('flags')
    if (templates.revision !== revision) templates = { revision, chars: 0, byScope: new Map() }
    const scope = flagScopeOf(principal).join('\n')
    const known = templates.byScope.get(scope)
    if (known) return known
    const parts: (string | Flag)[] = []
    const fixedOnes: CountedTemplate['fixed'][number][] = []
    let run: string[] = []
    let chars = 0
    for (const flag of read.list(visiblePrefixes(flagScopeOf(principal), ''))) {
      if (!canSeeFlag(principal, flag.name)) continue
      if (fixedAnswer(flag)) {
        const answer = one(flag, {}, snapshot)
        run.push(answer.text)
        fixedOnes.push({ flag, variant: answer.variant, reason: answer.reason })
        chars += answer.text.length
        continue
      }
      if (run.length > 0) parts.push(run.join(','))
      run = []
      parts.push(flag)
    }
    if (run.length > 0) parts.push(run.join(','))
    const template = { parts, counted: { fixed: fixedOnes } }
    if (templates.chars + chars <= TEMPLATE_CHARS) {
      templates.byScope.set(scope, template)
      templates.chars += chars
    }
    return template
  }
  const targetingOf = (snapshot: Snapshot) => {
    const revision = snapshot.revisionOf('flags')
    if (targeted.revision !== revision) {
      let any = false
      const clocked = new Set<string>()
      const segments = snapshot.segmentRules()
      for (const flag of snapshot.flags.values())
        if (flag.targeting !== undefined) {
          any = true
          if (readsClock(flag.targeting, segments)) clocked.add(flag.name)
        }
      targeted = { revision, any, clocked }
    }
    return targeted
  }
  // the second the answers of `principal` are made in, when a flag it sees reads the clock
  const clockOf = (principal: Principal, snapshot: Snapshot): number | undefined => {
    const { clocked } = targetingOf(snapshot)
    if (clocked.size === 0) return undefined
    for (const name of clocked) if (canSeeFlag(principal, name)) return seconds()
    return undefined
  }
  const tagOf = (principal: Principal, context: EvaluationContext, snapshot: Snapshot, second: number | undefined): string => {
    const revision = snapshot.revisionOf('flags')
    const scope = flagScopeOf(principal)
    const whole = targetingOf(snapshot).any
    const key = whole ? undefined : targetingKeyOf(context)
    const at = second === undefined ? '' : `@${second}`
    if (scope.length === 0 && key === undefined && (!whole || Object.keys(context).length === 0)) return `"${revision}${at}"`
    const counted = whole ? canonicalJson(context) : (key ?? '')
    const digest = Bun.hash.wyhash(`${scope.join('\n')}\u0000${counted}`, 0n).toString(36)
    return `"${revision}-${digest}${at}"`
  }
  const visibleFlag = (principal: Principal, key: string, snapshot: Snapshot): Flag => {
    const flag = canSeeFlag(principal, key) ? snapshot.flags.get(key) : undefined
    if (!flag) throw new NotFoundError(`no flag named ${JSON.stringify(key)}`)
    return flag
  }

  return {
    oneJson(principal, key, context) {
      requirePermission(principal, 'flag:evaluate')
      const snapshot = store.committed()
      const flag = visibleFlag(principal, key, snapshot)
      const answer = counted(flag, one(flag, context, snapshot))
      if (answer.failure) throw answer.failure
      return answer.text
    },

    explain(principal, key, context) {
      requirePermission(principal, 'flag:read')
      const snapshot = store.committed()
      return result(visibleFlag(principal, key, snapshot), context, snapshot, undefined, true)
    },

    bulk(principal, context, current) {
      requirePermission(principal, 'flag:evaluate')
      const snapshot = store.committed()
      // one second for the ETag and every rule of the answer, so the answer is the one its ETag names
      const second = clockOf(principal, snapshot)
      const etag = tagOf(principal, context, snapshot, second)
      const template = templateOf(principal, snapshot)
      if (current(etag)) {
        // a 304 re-sends nothing, so no variant is known: the flags count as asked for, without one
        if (counter) counter.countTemplate(unanswered(template))
        return { unchanged: true, etag }
      }
      counter?.countTemplate(template.counted)
      const kept = bulk.entry(etag)
      if (kept !== undefined) {
        if (kept.attached.fixed.length > 0) counter?.countTemplate(kept.attached)
        return { unchanged: false, etag, flags: kept.text }
      }
      // kept only from the second time a context is asked for: pollers repeat theirs, while
      // one-off contexts (a new visitor each request) would only push useful answers out
      const keep = seen.has(etag)
      seen.set(etag, true)
      const evaluations: string[] = []
      const outcomes: CountedTemplate['fixed'][number][] = []
      for (const part of template.parts) {
        if (typeof part === 'string') {
          evaluations.push(part)
          continue
        }
        const answer = counted(part, one(part, context, snapshot, second))
        if (keep) outcomes.push({ flag: part, variant: answer.variant, reason: answer.reason })
        if (!answer.failure) evaluations.push(answer.text)
        else evaluations.push(JSON.stringify({ key: answer.failure.key, errorCode: 'GENERAL', errorDetails: answer.failure.details }))
      }
      const flags = `[${evaluations.join(',')}]`
      if (keep) bulk.set(etag, flags, outcomes.length === 0 ? NOTHING_RULED : { fixed: outcomes })
      return { unchanged: false, etag, flags }
    },

    revision: () => store.committed().revisionOf('flags'),
    bulkCacheSize: () => bulk.size,
  }
}

/** A rule that always fails with `message` (a flag whose rule no longer compiles). */
function failing(message: string): Expr {
  return () => {
    throw new RuleFault(message)
  }
}
