/**
 * A BOOLEAN flag's quick rollout (docs/ui.md#common-tasks): preset shares of contexts that get
 * `true` in the chosen environment, written as a split sticky by targetingKey ("true 20 %, false
 * 80 %"; 100 % is the value `true` without a split), through the `Review changes` dialog where the
 * environment is protected. Shown only while no rule decides, so a preset never drops a rule.
 */

import { readTargeting, splitRule } from './rule-model.ts'
import { shares } from './rule-words.ts'

/** The shares offered, in percent. */
export const PRESETS = [5, 20, 50, 100] as const

/** The targeting and value that serve `true` to `percent` % of contexts, sticky by targetingKey. */
export function rolloutBody(percent: number): Record<string, unknown> {
  if (percent >= 100) return { targeting: null, value: true }
  const weights = [
    { variant: 'true', weight: percent },
    { variant: 'false', weight: 100 - percent },
  ]
  return { targeting: splitRule({ by: '', weights }) }
}

/**
 * The share of contexts `flag` serves `true` now, when nothing but a split (or no targeting) decides;
 * `null` when a rule, a fallback or another kind of flag makes a preset the wrong tool.
 */
export function presetShare(flag: Record<string, unknown>): number | null {
  if (flag.type !== 'BOOLEAN') return null
  const rollout = flag.rollout as { status?: string } | null | undefined
  if (rollout && rollout.status !== 'completed') return null
  if (flag.targeting === undefined || flag.targeting === null) return flag.value === true ? 100 : 0
  const model = readTargeting(flag.targeting)
  if (!model || model.rules.length > 0 || model.fallback !== '' || !model.split || model.split.by !== '') return null
  return shares(model.split).find((s) => s.variant === 'true')?.percent ?? 0
}

/** The preset buttons; `onRollOut` writes the chosen share (reviewed where protected). */
export function QuickRollout({
  flag,
  canWrite,
  onRollOut,
}: {
  flag: Record<string, unknown>
  canWrite: boolean
  onRollOut: (body: Record<string, unknown>) => void
}) {
  const now = presetShare(flag)
  if (!canWrite || now === null) return null
  return (
    <fieldset class="card quick-rollout">
      <legend>Roll out true to</legend>
      {PRESETS.map((p) => (
        <button
          key={p}
          type="button"
          class="plain"
          aria-label={`Roll out to ${p} %`}
          aria-pressed={Math.round(now) === p}
          onClick={() => onRollOut(rolloutBody(p))}
        >
          {p} %
        </button>
      ))}
      <span class="meta">sticky by targetingKey: a context keeps its answer as the share grows</span>
    </fieldset>
  )
}
