/**
 * The rule builder's percentage split (docs/ui.md), served when no rule matches: a `<variant> %`
 * field per variant (relative weights, as flagd's `fractional` takes them, with each variant's share
 * stated when they do not add up to 100), and the attribute that keeps a user's variant sticky.
 */

import type { Split } from './rule-model.ts'
import { shares } from './rule-words.ts'

/** The split served when no rule matches: a `<variant> %` field per variant, and what makes it sticky. */
export function SplitFields({
  split,
  variants,
  onChange,
  disabled,
}: {
  split: Split
  variants: string[]
  onChange: (s: Split | null) => void
  disabled?: boolean | undefined
}) {
  const names = [...new Set([...split.weights.map((w) => w.variant), ...variants])]
  const weightOf = (v: string) => split.weights.find((w) => w.variant === v)?.weight
  const share = new Map(shares(split).map((s) => [s.variant, s.percent]))
  const total = split.weights.reduce((t, w) => t + Math.max(0, w.weight), 0)
  const setWeight = (variant: string, text: string) => {
    const weight = text.trim() === '' ? 0 : Number(text)
    if (!Number.isFinite(weight)) return
    const known = split.weights.some((w) => w.variant === variant)
    onChange({
      ...split,
      weights: known
        ? split.weights.map((w) => (w.variant === variant ? { variant, weight } : w))
        : [...split.weights, { variant, weight }],
    })
  }
  return (
    <fieldset class="split">
      <legend>Percentage split (served when no rule matches)</legend>
      <div class="split-rows">
        {names.map((v) => (
          <div class="field" key={v}>
            <label for={`split-${v}`}>{`${v} %`}</label>
            <input
              id={`split-${v}`}
              type="number"
              min="0"
              step="any"
              disabled={disabled}
              value={weightOf(v) ?? 0}
              onInput={(e) => setWeight(v, e.currentTarget.value)}
            />
          </div>
        ))}
      </div>
      <p class="meta">
        {total === 0
          ? 'Give at least one variant a share.'
          : total === 100
            ? 'Shares of 100 %.'
            : `The numbers add up to ${total}: each variant gets its share of that (${[...share].map(([v, p]) => `${v} ${p.toFixed(1)} %`).join(', ')}).`}
      </p>
      <div class="field">
        <label for="split-by">Sticky by attribute</label>
        <input
          id="split-by"
          list="rule-attributes"
          value={split.by}
          disabled={disabled}
          placeholder="targetingKey"
          onInput={(e) => onChange({ ...split, by: e.currentTarget.value.trim() })}
        />
      </div>
      <p class="meta">The same {split.by || 'targetingKey'} always gets the same variant; empty means targetingKey.</p>
      {!disabled && (
        <button type="button" class="plain small" onClick={() => onChange(null)}>
          Remove split
        </button>
      )}
    </fieldset>
  )
}
