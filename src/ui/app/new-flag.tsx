/** Creating a flag (docs/ui.md): the type first, then its name and fields. */

import { useState } from 'preact/hooks'
import { api, messageOf } from './api.ts'
import { fieldErrors } from './field-errors.ts'
import { type Draft, FlagFields, type FlagType, newFlagOf, shownByFlagFields, TypeOptions } from './flag-fields.tsx'
import { navigate } from './router.ts'

const ZERO: Record<FlagType, unknown> = { BOOLEAN: false, INTEGER: 0, STRING: '', ENUM: '', TAG: [], 'AB-TEST': 'A', NUMBER: 0, OBJECT: {} }

export function NewFlag() {
  const [type, setType] = useState<FlagType | null>(null)
  const [name, setName] = useState('')
  const [draft, setDraft] = useState<Draft | null>(null)
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [message, setMessage] = useState<string | null>(null)
  function choose(t: FlagType) {
    setType(t)
    setDraft({
      type: t,
      description: '',
      defaultValue: ZERO[t],
      valueExists: false,
      value: ZERO[t],
      constraints: t === 'AB-TEST' ? { chancePercentB: '50' } : {},
      enumValues: [],
    })
  }
  async function create(e: Event) {
    e.preventDefault()
    if (!draft) return
    const { data, error } = await api.POST('/api/flags', { body: newFlagOf(name, draft) })
    if (!data) {
      const byField = fieldErrors(error)
      setErrors(byField)
      // each reason is shown once: next to its field, or here when no field of the form shows it
      const elsewhere = Object.entries(byField).filter(([field]) => field !== 'name' && !shownByFlagFields(draft.type, field))
      const message =
        Object.keys(byField).length === 0 ? messageOf(error) : elsewhere.map(([field, reason]) => `${field}: ${reason}`).join('; ')
      return setMessage(message === '' ? null : message)
    }
    navigate(`flags/${name}`)
  }
  return (
    <section class="page">
      <h1>New flag</h1>
      <div class="field">
        <label for="f-type">Type</label>
        <select id="f-type" value={type ?? ''} onChange={(e) => choose(e.currentTarget.value as FlagType)}>
          <option value="" disabled>
            Choose a type…
          </option>
          <TypeOptions />
        </select>
      </div>
      {draft && (
        <form onSubmit={create}>
          <div class="field">
            <label for="f-name">Name</label>
            <input id="f-name" value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="app/checkout/new_flow" />
            {errors.name && (
              <p class="error field-error" role="alert">
                {errors.name}
              </p>
            )}
          </div>
          <FlagFields d={draft} set={setDraft} errors={errors} />
          {message && (
            <p class="error" role="alert">
              {message}
            </p>
          )}
          <button type="submit">Create</button>
        </form>
      )}
    </section>
  )
}
