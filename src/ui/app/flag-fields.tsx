/**
 * The type-aware inputs of a flag (docs/ui.md): number, text, one-of, many-of, A/B with a
 * percentage; each labelled, each showing the service's own validation message for that field.
 */

import type { JSX } from 'preact'
import { useState } from 'preact/hooks'
import type { Body } from './api.ts'
import { Field } from './field.tsx'

export type FlagType = 'BOOLEAN' | 'INTEGER' | 'STRING' | 'ENUM' | 'TAG' | 'AB-TEST' | 'NUMBER' | 'OBJECT'
const FLAG_TYPES: FlagType[] = ['BOOLEAN', 'INTEGER', 'STRING', 'ENUM', 'TAG', 'AB-TEST', 'NUMBER', 'OBJECT']

/** One `<option>` per flag type, for the selects that choose or filter by type. */
export function TypeOptions() {
  return (
    <>
      {FLAG_TYPES.map((t) => (
        <option key={t} value={t}>
          {t}
        </option>
      ))}
    </>
  )
}

/** The editable part of a flag, as the form holds it. */
export interface Draft {
  type: FlagType
  description: string
  defaultValue: unknown
  valueExists: boolean
  value: unknown
  /** Numbers and the pattern, as typed. */
  constraints: Record<string, string>
  /** ENUM and TAG: the allowed values, exactly as they are (a value may hold commas or spaces). */
  enumValues: string[]
}

const CONSTRAINTS: Record<FlagType, [NumberConstraint | 'regexPattern', string][]> = {
  BOOLEAN: [],
  INTEGER: [
    ['minValue', 'Minimum'],
    ['maxValue', 'Maximum'],
  ],
  STRING: [
    ['maxLength', 'Maximum length'],
    ['regexPattern', 'Pattern (RE2)'],
  ],
  ENUM: [],
  TAG: [
    ['minCount', 'At least'],
    ['maxCount', 'At most'],
  ],
  'AB-TEST': [['chancePercentB', 'Chance of B (%)']],
  NUMBER: [
    ['minValue', 'Minimum'],
    ['maxValue', 'Maximum'],
  ],
  // an OBJECT's jsonSchema is kept as it is (the form does not send it)
  OBJECT: [],
}

/** A draft from a flag resource. */
export function draftOf(f: Record<string, unknown>): Draft {
  const type = f.type as FlagType
  const constraints: Record<string, string> = {}
  for (const [key] of CONSTRAINTS[type]) if (f[key] !== undefined && f[key] !== null) constraints[key] = String(f[key])
  return {
    type,
    description: String(f.description ?? ''),
    defaultValue: f.defaultValue,
    valueExists: Boolean(f.valueExists),
    value: f.value ?? f.defaultValue,
    constraints,
    enumValues: Array.isArray(f.enumValues) ? f.enumValues.filter((v): v is string => typeof v === 'string') : [],
  }
}

/** A flag change as the API takes it. */
export type FlagUpdate = Body<'updateFlag'>

type NumberConstraint = 'minValue' | 'maxValue' | 'maxLength' | 'minCount' | 'maxCount' | 'chancePercentB'

/** The request body of a draft: constraints left empty are removed (null). */
export function bodyOf(d: Draft): FlagUpdate {
  const body: FlagUpdate = { type: d.type, description: d.description, defaultValue: d.defaultValue, valueExists: d.valueExists }
  if (d.valueExists) body.value = d.value
  for (const [key] of CONSTRAINTS[d.type]) {
    const raw = (d.constraints[key] ?? '').trim()
    if (key === 'regexPattern') body.regexPattern = raw === '' ? null : raw
    else body[key] = raw === '' ? null : Number(raw)
  }
  // the list as it is: no splitting, no trimming (the service says what is wrong with it)
  if (d.type === 'ENUM' || d.type === 'TAG') body.enumValues = [...d.enumValues]
  return body
}

/** A new flag as the API takes it. */
export type NewFlag = Body<'createFlag'>

// the form's inputs give each type's values their JSON types; anything else is left out for the service's default
const bool = (v: unknown) => (typeof v === 'boolean' ? v : undefined)
const int = (v: unknown) => (typeof v === 'number' ? v : undefined)
const text = (v: unknown) => (typeof v === 'string' ? v : undefined)
const list = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined)
const variant = (v: unknown) => (v === 'A' || v === 'B' ? v : undefined)
const object = (v: unknown) => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined)
const given = <T,>(v: T | null | undefined): T | undefined => v ?? undefined

/** The request body that creates flag `name` from a draft (constraints left empty are left out). */
export function newFlagOf(name: string, d: Draft): NewFlag {
  const c = bodyOf(d)
  const common = { name, description: d.description, valueExists: d.valueExists }
  const value = <T,>(pick: (v: unknown) => T | undefined) => (d.valueExists ? { value: pick(d.value) } : {})
  switch (d.type) {
    case 'BOOLEAN':
      return { ...common, type: 'BOOLEAN', defaultValue: bool(d.defaultValue), ...value(bool) }
    case 'INTEGER':
      return {
        ...common,
        type: 'INTEGER',
        defaultValue: int(d.defaultValue),
        ...value(int),
        minValue: given(c.minValue),
        maxValue: given(c.maxValue),
      }
    case 'STRING':
      return {
        ...common,
        type: 'STRING',
        defaultValue: text(d.defaultValue),
        ...value(text),
        maxLength: given(c.maxLength),
        regexPattern: given(c.regexPattern),
      }
    case 'ENUM':
      // an empty default means the first allowed value
      return { ...common, type: 'ENUM', defaultValue: text(d.defaultValue) || undefined, ...value(text), enumValues: c.enumValues ?? [] }
    case 'TAG':
      return {
        ...common,
        type: 'TAG',
        defaultValue: list(d.defaultValue),
        ...value(list),
        enumValues: c.enumValues ?? [],
        minCount: given(c.minCount),
        maxCount: given(c.maxCount),
      }
    case 'AB-TEST':
      return {
        ...common,
        type: 'AB-TEST',
        defaultValue: variant(d.defaultValue),
        ...value(variant),
        chancePercentB: given(c.chancePercentB),
      }
    case 'NUMBER':
      return {
        ...common,
        type: 'NUMBER',
        defaultValue: int(d.defaultValue),
        ...value(int),
        minValue: given(c.minValue),
        maxValue: given(c.maxValue),
      }
    case 'OBJECT':
      return { ...common, type: 'OBJECT', defaultValue: object(d.defaultValue), ...value(object) }
  }
}

/** The options of a one-of or many-of value. */
const options = (d: Draft): string[] => (d.type === 'AB-TEST' ? ['A', 'B'] : d.enumValues.filter((v) => v !== ''))

/** The allowed values of an ENUM or TAG, one row each: a value may hold commas, spaces, anything. */
function ValueList({
  type,
  values,
  onChange,
  error,
}: {
  type: string
  values: string[]
  onChange: (next: string[]) => void
  error?: string | undefined
}) {
  return (
    <fieldset class="value-list" id="f-enumValues" aria-describedby="f-enum-note">
      <legend>Allowed values</legend>
      {/* docs/environments.md#protected-environments: an ENUM's values are its variants, a TAG's only a check */}
      <p class="meta" id="f-enum-note">
        {type === 'ENUM'
          ? "They are this flag's variants, shared by every environment: a change that removes one goes through Review changes while an environment is protected."
          : 'Shared by every environment and saved at once, with no review; a value an environment serves cannot be removed.'}
      </p>
      {values.map((v, i) => (
        <div class="value-row" key={i}>
          <label class="sr-only" for={`f-enum-${i}`}>{`Allowed value ${i + 1}`}</label>
          <input id={`f-enum-${i}`} value={v} onInput={(e) => onChange(values.map((x, j) => (j === i ? e.currentTarget.value : x)))} />
          <button
            type="button"
            class="plain"
            aria-label={`Remove allowed value ${i + 1}`}
            onClick={() => onChange(values.filter((_, j) => j !== i))}
          >
            Remove
          </button>
        </div>
      ))}
      <button type="button" class="plain" onClick={() => onChange([...values, ''])}>
        Add a value
      </button>
      {error && (
        <p class="error field-error" role="alert">
          {error}
        </p>
      )}
    </fieldset>
  )
}

/** An OBJECT value as JSON text: the text is kept while it does not parse; a parsed object goes up. */
function JsonObjectInput({ id, value, onChange }: { id: string; value: unknown; onChange: (v: unknown) => void }) {
  const [text, setText] = useState(() => JSON.stringify(value ?? {}, null, 2))
  return (
    <textarea
      id={id}
      class="json"
      rows={Math.min(16, Math.max(3, text.split('\n').length))}
      value={text}
      onInput={(e) => {
        const next = e.currentTarget.value
        setText(next)
        try {
          onChange(JSON.parse(next))
        } catch {
          onChange(next) // not JSON yet: the service says so if it is saved like this
        }
      }}
    />
  )
}

export function ValueInput({
  id,
  label,
  d,
  value,
  onChange,
  error,
}: {
  id: string
  label: string
  d: Draft
  value: unknown
  onChange: (v: unknown) => void
  error?: string | undefined
}) {
  let input: JSX.Element
  if (d.type === 'BOOLEAN' || d.type === 'ENUM' || d.type === 'AB-TEST') {
    const choices = d.type === 'BOOLEAN' ? ['true', 'false'] : options(d)
    input = (
      <select
        id={id}
        value={String(value)}
        onChange={(e) => onChange(d.type === 'BOOLEAN' ? e.currentTarget.value === 'true' : e.currentTarget.value)}
      >
        {choices.map((c) => (
          <option key={c} value={c}>
            {c}
          </option>
        ))}
      </select>
    )
  } else if (d.type === 'TAG') {
    const chosen = new Set(Array.isArray(value) ? (value as string[]) : [])
    input = (
      <fieldset id={id} class="many-of">
        <legend class="sr-only">{label}</legend>
        {options(d).map((o) => (
          <label key={o}>
            <input
              type="checkbox"
              checked={chosen.has(o)}
              onChange={(e) => onChange(options(d).filter((x) => (x === o ? e.currentTarget.checked : chosen.has(x))))}
            />{' '}
            {o}
          </label>
        ))}
      </fieldset>
    )
  } else if (d.type === 'STRING') {
    // a text area keeps line breaks (a one-line input would flatten a JSON or multi-line value)
    const text = value === undefined ? '' : String(value)
    input = (
      <textarea
        id={id}
        rows={Math.min(12, Math.max(1, text.split('\n').length))}
        value={text}
        onInput={(e) => onChange(e.currentTarget.value)}
      />
    )
  } else if (d.type === 'OBJECT') {
    input = <JsonObjectInput id={id} value={value} onChange={onChange} />
  } else {
    input = (
      <input
        id={id}
        type="number"
        step={d.type === 'NUMBER' ? 'any' : 1}
        value={value === undefined ? '' : String(value)}
        onInput={(e) => onChange(e.currentTarget.value === '' ? '' : Number(e.currentTarget.value))}
      />
    )
  }
  return (
    <Field id={id} label={label} error={error}>
      {input}
    </Field>
  )
}

/** Whether `FlagFields` shows the service's reason for `field` next to an input (so a summary need not repeat it). */
export function shownByFlagFields(type: FlagType, field: string): boolean {
  const own = ['description', 'enumValues', 'defaultValue', 'value', ...CONSTRAINTS[type].map(([key]) => key)]
  return own.some((f) => field === f || field.startsWith(`${f}.`))
}

/** Every editable field of a draft; `errors` maps field names to the service's reasons. */
export function FlagFields({
  d,
  set,
  errors,
  disabled,
}: {
  d: Draft
  set: (d: Draft) => void
  errors: Record<string, string>
  disabled?: boolean
}) {
  const err = (field: string) => errors[field] ?? Object.entries(errors).find(([k]) => k.startsWith(`${field}.`))?.[1]
  return (
    <fieldset class="flag-fields" disabled={disabled}>
      <Field id="f-description" label="Description" error={err('description')}>
        <input id="f-description" value={d.description} onInput={(e) => set({ ...d, description: e.currentTarget.value })} />
      </Field>
      {CONSTRAINTS[d.type].map(([key, label]) => (
        <Field key={key} id={`f-${key}`} label={label} error={err(key)}>
          <input
            id={`f-${key}`}
            type={key === 'regexPattern' ? 'text' : 'number'}
            step="any"
            value={d.constraints[key] ?? ''}
            onInput={(e) => set({ ...d, constraints: { ...d.constraints, [key]: e.currentTarget.value } })}
          />
        </Field>
      ))}
      {(d.type === 'ENUM' || d.type === 'TAG') && (
        <ValueList type={d.type} values={d.enumValues} onChange={(enumValues) => set({ ...d, enumValues })} error={err('enumValues')} />
      )}
      <ValueInput
        id="f-default"
        label="Default value"
        d={d}
        value={d.defaultValue}
        onChange={(v) => set({ ...d, defaultValue: v })}
        error={err('defaultValue')}
      />
      <div class="field inline">
        <input
          id="f-has-value"
          type="checkbox"
          checked={d.valueExists}
          onChange={(e) => set({ ...d, valueExists: e.currentTarget.checked })}
        />
        <label for="f-has-value">
          {d.type === 'AB-TEST'
            ? `Pin a variant (else users are split A ${100 - Number(d.constraints.chancePercentB || 50)}% / B ${Number(d.constraints.chancePercentB || 50)}% by targetingKey; without one, the default applies)`
            : 'Has a value (else the default applies)'}
        </label>
      </div>
      {d.valueExists && (
        <ValueInput id="f-value" label="Value" d={d} value={d.value} onChange={(v) => set({ ...d, value: v })} error={err('value')} />
      )}
    </fieldset>
  )
}
