/**
 * What a flag serves now, in one sentence (docs/ui.md#a-flags-page): a rollout first ("Serves
 * "true" to 59.5 % of contexts now, rising to 100 % on …"), then its rules, counted, and its split
 * ("2 rules decide first, then 20 % on, 80 % off"), then the value; "to everyone" only when nothing
 * else decides.
 */

import { localTime } from './local-time.ts'
import { type ReadRollout, rolloutNow } from './rollout-words.ts'
import { readTargeting } from './rule-model.ts'
import { splitInWords } from './rule-words.ts'

/** What the sentence needs of a flag in the chosen environment. */
export interface FlagNow {
  type: string
  enabled?: boolean
  valueExists?: boolean
  value?: unknown
  defaultValue?: unknown
  chancePercentB?: number
  targeting?: unknown
  rollout?: ReadRollout | null
}

/** What the flag answers where nothing else decides: its value, its default, or its A/B split. */
function ownAnswer(flag: FlagNow): string {
  if (flag.type === 'AB-TEST' && !flag.valueExists) return `an A/B split (${Number(flag.chancePercentB ?? 50)} % B)`
  if (flag.valueExists) return JSON.stringify(flag.value)
  return flag.defaultValue === null || flag.defaultValue === undefined
    ? "the application's own default"
    : `${JSON.stringify(flag.defaultValue)} (default)`
}

/**
 * What the rule decides, as a clause: `kind` tells whether it depends on the context (rules first),
 * splits every context (a split alone), or always serves one variant.
 */
function ruleClause(targeting: unknown, own: string): { kind: 'rules' | 'split' | 'always'; words: string } {
  const model = readTargeting(targeting ?? null)
  if (!model) return { kind: 'rules', words: `a rule written as JSON decides (see Targeting), then ${own} where it serves nothing` }
  const then = model.split ? splitInWords(model.split) : model.fallback !== '' ? JSON.stringify(model.fallback) : own
  const n = model.rules.length
  if (n > 0) return { kind: 'rules', words: `${n} ${n === 1 ? 'rule decides' : 'rules decide'} first (see Targeting), then ${then}` }
  if (model.split) return { kind: 'split', words: then }
  return { kind: 'always', words: `${then}, which its rule serves to every context (see Targeting)` }
}

/** The sentence at the top of a flag's page, at `nowMs`. */
export function servesNow(flag: FlagNow, nowMs: number, time: (iso: string) => string = localTime): string {
  if (flag.enabled === false) return 'Serves nothing: applications use their own default.'
  const own = ownAnswer(flag)
  const rule = flag.targeting ? ruleClause(flag.targeting, own) : null
  const rest = rule?.words ?? own
  if (flag.rollout) {
    const now = rolloutNow(flag.rollout, nowMs, time)
    // rolled back by its guard, the rollout serves no one: the flag answers as without it
    if (flag.rollout.status === 'rolled-back') return `${now}; ${rule ? 'instead' : 'everyone gets'}: ${rest}.`
    return `${now}; the others: ${rest}.`
  }
  if (!rule) return `Serves ${own} to everyone.`
  if (rule.kind === 'rules') return `Depends on who asks: ${rule.words}.`
  return rule.kind === 'split' ? `Serves ${rule.words} (see Targeting).` : `Serves ${rule.words}.`
}
