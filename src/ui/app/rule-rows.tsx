/**
 * The rows of the rule builder (docs/ui.md): a condition "Attribute · Operator · Value" and a rule
 * (its conditions and the variant it serves, a group named `Rule N`). Shared by the flag page and the
 * segments page; the split is `split-fields.tsx`.
 */

import { useState } from 'preact/hooks'
import { type BuilderRule, type Condition, kindOf, type Literal, OPERATORS, type Operator } from './rule-model.ts'

/** Attributes offered while typing (any other is fine). */
const COMMON_ATTRIBUTES = ['targetingKey', 'email', 'userId', 'country', 'plan', 'appVersion', 'role']

/** A typed value from what was typed, keeping the JSON type the value had before when it still fits. */
function literalOf(text: string, before: Literal | undefined, kind: string): Literal {
  const t = text.trim()
  const asNumber = t !== '' && Number.isFinite(Number(t)) ? Number(t) : undefined
  if (kind === 'number') return asNumber ?? text
  if (typeof before === 'number' && asNumber !== undefined) return asNumber
  if (typeof before === 'boolean' && (t === 'true' || t === 'false')) return t === 'true'
  return kind === 'list' ? t : text
}

const valueText = (c: Condition) => (kindOf(c.operator) === 'list' ? c.values.map(String).join(', ') : String(c.values[0] ?? ''))

/** One condition's controls; `n` > 1 numbers the labels of a rule's later conditions. */
export function ConditionFields({
  id,
  n,
  c,
  segments,
  onChange,
  disabled,
}: {
  id: string
  n: number
  c: Condition
  segments: string[]
  onChange: (c: Condition) => void
  disabled?: boolean | undefined
}) {
  const suffix = n > 1 ? ` ${n}` : ''
  const kind = kindOf(c.operator)
  const setOperator = (operator: Operator) => {
    const next = kindOf(operator)
    if (next === 'segment') return onChange({ attribute: '', operator, values: kind === 'segment' ? c.values : [segments[0] ?? ''] })
    onChange({ attribute: kind === 'segment' ? '' : c.attribute, operator, values: kind === 'segment' ? [] : c.values })
  }
  const valuesOf = (text: string): Literal[] =>
    kind === 'list'
      ? text
          .split(',')
          .map((part, i) => literalOf(part, c.values[i], 'list'))
          .filter((v) => v !== '')
      : [literalOf(text, c.values[0], kind)]
  // the text as typed ("DE, " on the way to "DE, FR"), kept while it means the values the rule has
  const [typed, setTyped] = useState(() => valueText(c))
  const shown = valueText({ ...c, values: valuesOf(typed) }) === valueText(c) ? typed : valueText(c)
  const setValue = (text: string) => {
    setTyped(text)
    onChange({ ...c, values: valuesOf(text) })
  }
  return (
    <div class="condition">
      {kind !== 'segment' && (
        <div class="field">
          <label for={`${id}-attr`}>{`Attribute${suffix}`}</label>
          <input
            id={`${id}-attr`}
            list="rule-attributes"
            value={c.attribute}
            disabled={disabled}
            placeholder="email"
            onInput={(e) => onChange({ ...c, attribute: e.currentTarget.value })}
          />
        </div>
      )}
      <div class="field">
        <label for={`${id}-op`}>{`Operator${suffix}`}</label>
        <select id={`${id}-op`} value={c.operator} disabled={disabled} onChange={(e) => setOperator(e.currentTarget.value as Operator)}>
          {OPERATORS.map((o) => (
            <option key={o.id} value={o.id}>
              {o.id}
            </option>
          ))}
        </select>
      </div>
      <div class="field grow">
        <label for={`${id}-value`}>{`Value${suffix}`}</label>
        {kind === 'segment' ? (
          <select
            id={`${id}-value`}
            value={String(c.values[0] ?? '')}
            disabled={disabled}
            onChange={(e) => setValue(e.currentTarget.value)}
          >
            {[...new Set([...segments, String(c.values[0] ?? '')])].map((s) => (
              <option key={s} value={s}>
                {s === '' ? '(no segment yet)' : s}
              </option>
            ))}
          </select>
        ) : (
          <input
            id={`${id}-value`}
            value={shown}
            disabled={disabled}
            inputMode={kind === 'number' ? 'decimal' : undefined}
            placeholder={kind === 'list' ? 'DE, FR, IT' : kind === 'version' ? '2.1.0' : kind === 'number' ? '18' : '@example.com'}
            onInput={(e) => setValue(e.currentTarget.value)}
          />
        )}
      </div>
    </div>
  )
}

/** The attribute suggestions every condition's Attribute field offers. */
export function AttributeSuggestions() {
  return (
    <datalist id="rule-attributes">
      {COMMON_ATTRIBUTES.map((a) => (
        <option key={a} value={a} />
      ))}
    </datalist>
  )
}

/** A new condition. */
export const blankCondition = (): Condition => ({ attribute: '', operator: 'equals', values: [] })

/** Rule `index + 1`: its conditions (all must hold) and the variant it serves. */
export function RuleGroup({
  index,
  count,
  rule,
  variants,
  segments,
  error,
  onChange,
  onMove,
  onRemove,
  disabled,
}: {
  index: number
  count: number
  rule: BuilderRule
  variants: string[]
  segments: string[]
  error?: string | undefined
  onChange: (r: BuilderRule) => void
  onMove: (to: number) => void
  onRemove: () => void
  disabled?: boolean | undefined
}) {
  const n = index + 1
  return (
    <fieldset class="rule">
      <legend>{`Rule ${n}`}</legend>
      {rule.conditions.map((c, i) => (
        <div class="condition-row" key={i}>
          {i > 0 && <span class="and">and</span>}
          <ConditionFields
            id={`rule-${n}-c${i + 1}`}
            n={i + 1}
            c={c}
            segments={segments}
            disabled={disabled}
            onChange={(next) => onChange({ ...rule, conditions: rule.conditions.map((x, j) => (j === i ? next : x)) })}
          />
          {i > 0 && !disabled && (
            <button
              type="button"
              class="plain small"
              aria-label={`Remove condition ${i + 1} of rule ${n}`}
              onClick={() => onChange({ ...rule, conditions: rule.conditions.filter((_, j) => j !== i) })}
            >
              ×
            </button>
          )}
        </div>
      ))}
      <div class="rule-foot">
        <div class="field">
          <label for={`rule-${n}-serve`}>Serve</label>
          <select
            id={`rule-${n}-serve`}
            value={rule.serve}
            disabled={disabled}
            onChange={(e) => onChange({ ...rule, serve: e.currentTarget.value })}
          >
            {[...new Set([...variants, rule.serve])].map((v) => (
              <option key={v} value={v}>
                {v}
              </option>
            ))}
          </select>
        </div>
        {!disabled && (
          <div class="rule-tools">
            <button
              type="button"
              class="plain small"
              onClick={() => onChange({ ...rule, conditions: [...rule.conditions, blankCondition()] })}
            >
              {`And condition`}
              <span class="sr-only">{` in rule ${n}`}</span>
            </button>
            {index > 0 && (
              <button type="button" class="plain small" aria-label={`Move rule ${n} up`} onClick={() => onMove(index - 1)}>
                ↑
              </button>
            )}
            {index < count - 1 && (
              <button type="button" class="plain small" aria-label={`Move rule ${n} down`} onClick={() => onMove(index + 1)}>
                ↓
              </button>
            )}
            <button type="button" class="plain small" aria-label={`Remove rule ${n}`} onClick={onRemove}>
              Remove
            </button>
          </div>
        )}
      </div>
      {error && (
        <p class="error field-error" role="alert">
          {error}
        </p>
      )}
    </fieldset>
  )
}
