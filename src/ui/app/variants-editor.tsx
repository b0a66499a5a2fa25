/**
 * A flag's variants (docs/targeting.md#rules, docs/ui.md): the named values a rule can serve, each edited with the
 * input that fits the flag's type (the same inputs as the value: number, text, one-of, many-of,
 * JSON). The built-in variants (BOOLEAN true/false, AB-TEST A/B, one per ENUM value) are listed
 * beside them, read-only. Saved with `If-Match`; the service's message shows at the variant.
 */

import { useEffect, useState } from 'preact/hooks'
import { builtInVariants, type FlagType } from '../../domain/flag.ts'
import { fieldErrors } from './field-errors.ts'
import { type Draft, draftOf, ValueInput } from './flag-fields.tsx'
import { writeFlag, writtenInWords } from './flag-writes.ts'
import { done, type Notice, NoticeLine, refused } from './notice.tsx'

type Row = { name: string; value: unknown }
const rowsOf = (variants: unknown): Row[] =>
  variants && typeof variants === 'object'
    ? Object.entries(variants as Record<string, unknown>).map(([name, value]) => ({ name, value }))
    : []

export function VariantsEditor({ flag, canWrite, onSaved }: { flag: Record<string, unknown>; canWrite: boolean; onSaved: () => void }) {
  const d: Draft = draftOf(flag)
  const [rows, setRows] = useState<Row[]>(() => rowsOf(flag.variants))
  const [dirty, setDirty] = useState(false)
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [notice, setNotice] = useState<Notice>(null)
  const key = JSON.stringify(flag.variants ?? null)
  useEffect(() => {
    if (!dirty) setRows(rowsOf(flag.variants))
  }, [key])
  const edit = (next: Row[]) => {
    setRows(next)
    setDirty(true)
  }
  const builtIn = builtInVariants(flag.type as FlagType, d.enumValues)
  const listed = new Set(rows.map((r) => r.name))

  async function save() {
    setErrors({})
    setNotice(null)
    const variants = rows.length === 0 ? null : Object.fromEntries(rows.map((r) => [r.name, r.value]))
    // variants are served by every environment: reviewed and requested in a protected one
    // (docs/ui.md#review-before-protected-changes)
    const result = await writeFlag(flag, { variants }, false)
    if ('error' in result) {
      setErrors(fieldErrors(result.error))
      return setNotice(refused(result.error))
    }
    setDirty(false)
    setNotice(done(writtenInWords(result, (r) => `variants saved as revision ${r}`)))
    onSaved()
  }

  const blank = d.type === 'OBJECT' ? {} : d.type === 'TAG' ? [] : d.type === 'BOOLEAN' ? true : d.defaultValue
  return (
    <section class="card" aria-labelledby="variants-title">
      <h2 id="variants-title">Variants</h2>
      <p class="meta">
        Named values a rule can serve.
        {d.type === 'ENUM' && ' An ENUM has one built-in variant per allowed value; change those under Value and settings.'}
        {Object.keys(builtIn).length > 0 &&
          ` Built in: ${Object.entries(builtIn)
            .filter(([n]) => !listed.has(n))
            .map(([n, v]) => `${n} = ${JSON.stringify(v)}`)
            .join(', ')}.`}
      </p>
      {d.type === 'OBJECT' && flag.jsonSchema !== undefined && flag.jsonSchema !== null && (
        <details class="schema">
          <summary>Every variant must satisfy the flag's JSON Schema</summary>
          <pre>{JSON.stringify(flag.jsonSchema, null, 2)}</pre>
        </details>
      )}
      {rows.map((r, i) => (
        <fieldset class="variant" key={i} disabled={!canWrite}>
          <legend class="sr-only">{`Variant ${i + 1}`}</legend>
          <div class="field">
            <label for={`variant-${i}-name`}>{`Variant ${i + 1} name`}</label>
            <input
              id={`variant-${i}-name`}
              value={r.name}
              onInput={(e) => edit(rows.map((x, j) => (j === i ? { ...x, name: e.currentTarget.value } : x)))}
            />
          </div>
          <ValueInput
            id={`variant-${i}-value`}
            label={`Variant ${i + 1} value`}
            d={d}
            value={r.value}
            onChange={(value) => edit(rows.map((x, j) => (j === i ? { ...x, value } : x)))}
            error={errors[`variants.${r.name}`]}
          />
          {canWrite && (
            <button
              type="button"
              class="plain small"
              aria-label={`Remove variant ${r.name || i + 1}`}
              onClick={() => edit(rows.filter((_, j) => j !== i))}
            >
              Remove
            </button>
          )}
        </fieldset>
      ))}
      {errors.variants && (
        <p class="error field-error" role="alert">
          {errors.variants}
        </p>
      )}
      <NoticeLine notice={notice} />
      {canWrite && (
        <div class="actions">
          <button type="button" class="plain" onClick={() => edit([...rows, { name: '', value: blank }])}>
            Add variant
          </button>
          {dirty && (
            <button type="button" onClick={save}>
              Save variants
            </button>
          )}
        </div>
      )}
    </section>
  )
}
