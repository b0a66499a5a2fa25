/**
 * The caching decorator of the evaluator (docs/architecture.md#caching): the same interface as the
 * plain one, the same answers, less work.
 *
 * - In the served snapshot (`served-snapshot.ts`, one per revision and environment, so never stale):
 *   a flag whose answer is the same for every context is serialised once; a rule's answer is kept
 *   per outcome (the variant it chose, or the default), since every context reaching that outcome
 *   gets the same text. Answers that depend on the targeting key (an A/B split) and errors are made
 *   each time, so a flag keeps at most one answer per variant, plus its default.
 * - In the request cache, under its budget and for the flags' revision: each scope's bulk
 *   template (the fixed answers joined into runs, the flags to evaluate between), and whole bulk
 *   answers by ETag, kept from the second time an ETag is asked for (pollers repeat theirs; one-off
 *   contexts would only push useful answers out).
 */

import { flagScopeOf } from '../domain/access-policy.ts'
import type { EvaluationContext } from '../domain/evaluation.ts'
import type { Flag } from '../domain/flag.ts'
import { environmentOf, type Principal } from '../domain/principal.ts'
import { type RequestCache, scopeKey, textBytes } from '../domain/request-cache.ts'
import { servedTargeting } from '../domain/rollout.ts'
import type { RuleOutcome } from '../domain/targeting/targeting.ts'
import { prerequisiteCheck } from './cached-prerequisites.ts'
import { type Answer, bulkItem, type FlagEvaluator, fixedAnswer, type PlainFlagEvaluator } from './flag-evaluator.ts'
import type { ServedSnapshot } from './served-snapshot.ts'
import type { CountedTemplate } from './usage-counter.ts'

/** A scope's bulk answer without a context: the fixed answers in runs, the flags to evaluate between. */
interface Template {
  parts: (string | Flag)[]
  /** The fixed answers, for usage: a bulk answer counts them with one increment. */
  counted: CountedTemplate
  /** The same flags as a `304` counts them (no variant known), made on first use. */
  asked?: CountedTemplate
  chars: number
}

/** A kept bulk answer and the outcomes of its flags with rules (usage counts them when it is served again). */
interface KeptBulk {
  flags: string
  outcomes: CountedTemplate
}

const NOTHING_RULED: CountedTemplate = { fixed: [] }

/** Wraps `plain` (see module comment); `cache` holds what is keyed by request data. */
export function cachedFlagEvaluator(plain: PlainFlagEvaluator, cache: RequestCache): FlagEvaluator {
  const templates = cache.region<Template>('bulk-templates', (t) => 2 * t.chars + 16 * t.parts.length)
  const answers = cache.region<KeptBulk>('bulk-answers', (k) => textBytes(k.flags) + 48 * k.outcomes.fixed.length)
  const seen = cache.region<true>('bulk-seen', () => 0)

  // the answer a rule's outcome gives: only the flag's own outcomes are kept (a rule may return any
  // text of the context, an error)
  const fromOutcome = (flag: Flag, context: EvaluationContext, served: ServedSnapshot, outcome: RuleOutcome): Answer => {
    const key =
      outcome.kind === 'variant' ? `v\u0000${outcome.variant}` : outcome.kind === 'default' && flag.type !== 'AB-TEST' ? 'd' : undefined
    const make = () => plain.answerFrom(flag, context, outcome)
    if (key === undefined) return make()
    return served.part(flag, key, make, (answer) => answer.failure === undefined)
  }

  // the answer of a flag whose prerequisite does not hold: its default, kept unless a split gives it
  const unmet = (flag: Flag, context: EvaluationContext, served: ServedSnapshot): Answer =>
    flag.type === 'AB-TEST' && !flag.valueExists
      ? plain.unmet(flag, context)
      : served.part(
          flag,
          'p',
          () => plain.unmet(flag, {}),
          () => true,
        )

  // the answer as if its prerequisites held
  const own = (flag: Flag, context: EvaluationContext, served: ServedSnapshot, timestamp?: number): Answer => {
    if (servedTargeting(flag) !== undefined) return fromOutcome(flag, context, served, plain.outcome(flag, context, served, timestamp))
    return plain.own(flag, context, served, timestamp)
  }

  const prerequisitesHold = prerequisiteCheck(plain, { own, unmet, ruled: fromOutcome })

  const one = (flag: Flag, context: EvaluationContext, served: ServedSnapshot, timestamp?: number): Answer => {
    if (!fixedAnswer(flag)) {
      if (flag.prerequisites === undefined) return own(flag, context, served, timestamp)
      // one second for every rule of the chain, as the plain evaluator reads it
      const at = timestamp ?? plain.second()
      return prerequisitesHold(flag, context, served, at) ? own(flag, context, served, at) : unmet(flag, context, served)
    }
    return served.part(
      flag,
      '',
      () => plain.one(flag, {}, served, timestamp),
      () => true,
    )
  }

  const templateOf = (principal: Principal, served: ServedSnapshot): Template =>
    templates.through(scopeKey(environmentOf(principal), flagScopeOf(principal)), served.snapshot.revisionOf('flags'), () => {
      const parts: (string | Flag)[] = []
      const fixedOnes: CountedTemplate['fixed'][number][] = []
      let run: string[] = []
      let chars = 0
      for (const flag of plain.visible(principal, served)) {
        if (fixedAnswer(flag)) {
          const answer = one(flag, {}, served)
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
      return { parts, counted: { fixed: fixedOnes }, chars }
    })

  return {
    served: plain.served,
    one,
    explain: plain.explain,
    answers: (principal, context, served, timestamp) =>
      plain.visible(principal, served).map((flag): [Flag, Answer] => [flag, one(flag, context, served, timestamp)]),
    asked(principal, served) {
      const template = templateOf(principal, served)
      if (template.asked === undefined) {
        const flags = template.parts.flatMap((p) => (typeof p === 'string' ? [] : [p])).concat(template.counted.fixed.map((f) => f.flag))
        template.asked = { fixed: flags.map((flag) => ({ flag, variant: '', reason: 'NOT_MODIFIED' })) }
      }
      return template.asked
    },
    all(principal, context, served, timestamp, etag) {
      const revision = served.snapshot.revisionOf('flags')
      const template = templateOf(principal, served)
      // the scope in full beside the ETag, whose digest of it is only a hash
      const key = `${scopeKey(environmentOf(principal), flagScopeOf(principal))}${etag}`
      const kept = answers.get(key, revision)
      if (kept !== undefined) return { flags: kept.flags, counts: { templates: [template.counted, kept.outcomes], answers: [] } }
      const keep = seen.get(key, revision) !== undefined
      seen.set(key, revision, true)
      const items: string[] = []
      const evaluated: [Flag, Answer][] = []
      for (const part of template.parts) {
        if (typeof part === 'string') {
          items.push(part)
          continue
        }
        const answer = one(part, context, served, timestamp)
        evaluated.push([part, answer])
        items.push(bulkItem(answer))
      }
      const flags = `[${items.join(',')}]`
      if (keep) {
        const ruledOnes = evaluated.map(([flag, a]) => ({ flag, variant: a.variant, reason: a.reason }))
        answers.set(key, revision, { flags, outcomes: ruledOnes.length === 0 ? NOTHING_RULED : { fixed: ruledOnes } })
      }
      return { flags, counts: { templates: [template.counted], answers: evaluated } }
    },
  }
}
