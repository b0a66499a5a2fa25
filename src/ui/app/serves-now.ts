/**
 * What a flag serves now, in one sentence (docs/ui.md#a-flags-page): a rollout first ("serves
 * "true" to 59.5 % of contexts now, rising to 100 % on …"), then a rule, then the value; never
 * "to everyone" while a rule or a rollout decides.
 */

import { localTime } from './local-time.ts'
import { type ReadRollout, rolloutNow } from './rollout-words.ts'

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

/** The sentence at the top of a flag's page, at `nowMs`. */
export function servesNow(flag: FlagNow, nowMs: number, time: (iso: string) => string = localTime): string {
  if (flag.enabled === false) return 'Serves nothing: applications use their own default.'
  const own = ownAnswer(flag)
  const rest = flag.targeting ? `the rule decides (see Targeting), else ${own}` : own
  // rolled back by its guard, the rollout serves no one: the flag answers as without it
  if (flag.rollout?.status === 'rolled-back') return `${rolloutNow(flag.rollout, nowMs, time)}; everyone gets: ${rest}.`
  if (flag.rollout) return `${rolloutNow(flag.rollout, nowMs, time)}; the others: ${rest}.`
  return flag.targeting ? `Depends on who asks (see Targeting); when no rule decides: ${own}.` : `Serves ${own} to everyone.`
}
