/**
 * The rule builder of a flag's targeting (docs/ui.md#targeting-without-json): rules in order
 * (`Rule N`, moved with ↑ ↓), `Add rule`, `Add split` and its `<variant> %` fields, the `Default`,
 * and the service's messages that belong to no one rule.
 */

import type { RuleProblem } from './rule-json-editor.tsx'
import type { TargetingModel } from './rule-model.ts'
import { blankCondition, RuleGroup } from './rule-rows.tsx'
import { SplitFields } from './split-fields.tsx'

/** The problems that belong to rule `k` (its condition or its Serve), by the service's paths. */
const ruleError = (problems: RuleProblem[], k: number) =>
  problems.find((p) => p.field.startsWith(`targeting.if[${2 * k}]`) || p.field === `targeting.if[${2 * k + 1}]`)?.reason

/** The builder's rows for `model`; every change goes to `onChange` as a whole new model. */
export function RuleBuilder({
  model,
  variants,
  splitVariants,
  segments,
  disabled,
  problems,
  onChange,
}: {
  model: TargetingModel
  variants: string[]
  splitVariants: string[]
  segments: string[]
  disabled: boolean
  problems: RuleProblem[]
  onChange: (model: TargetingModel) => void
}) {
  return (
    <>
      {model.rules.map((r, k) => (
        <RuleGroup
          key={k}
          index={k}
          count={model.rules.length}
          rule={r}
          variants={variants}
          segments={segments}
          disabled={disabled}
          error={ruleError(problems, k)}
          onChange={(next) => onChange({ ...model, rules: model.rules.map((x, j) => (j === k ? next : x)) })}
          onRemove={() => onChange({ ...model, rules: model.rules.filter((_, j) => j !== k) })}
          onMove={(to) => {
            const rules = [...model.rules]
            const [moved] = rules.splice(k, 1)
            rules.splice(to, 0, moved as (typeof rules)[number])
            onChange({ ...model, rules })
          }}
        />
      ))}
      {!disabled && (
        <div class="actions">
          <button
            type="button"
            class="plain"
            onClick={() => onChange({ ...model, rules: [...model.rules, { conditions: [blankCondition()], serve: variants[0] ?? '' }] })}
          >
            Add rule
          </button>
          {!model.split && (
            <button type="button" class="plain" onClick={() => onChange({ ...model, split: { by: '', weights: [] } })}>
              Add split
            </button>
          )}
        </div>
      )}
      {model.split && (
        <SplitFields split={model.split} variants={splitVariants} disabled={disabled} onChange={(split) => onChange({ ...model, split })} />
      )}
      <div class="field">
        <label for="targeting-default">Default</label>
        <select
          id="targeting-default"
          value={model.fallback}
          disabled={disabled}
          onChange={(e) => onChange({ ...model, fallback: e.currentTarget.value })}
        >
          <option value="">the flag's own value (reason DEFAULT)</option>
          {[...new Set([...variants, model.fallback].filter((v) => v !== ''))].map((v) => (
            <option key={v} value={v}>
              {v}
            </option>
          ))}
        </select>
      </div>
      <p class="meta">
        {model.split
          ? 'Default: served when the split cannot place a user (the context has no such attribute).'
          : 'Default: served when no rule matches.'}
      </p>
      {problems
        .filter((p) => !/^targeting\.if\[\d+\]/.test(p.field) || model.rules.length === 0)
        .map((p, i) => (
          <p key={i} class="error field-error" role="alert">
            {p.field}: {p.reason}
          </p>
        ))}
    </>
  )
}
