/**
 * A flag's prerequisites on its page (docs/ui.md#lifecycle-archive-and-prerequisites): "Requires
 * checkout/new_api to be on" and "Required by …", each flag a link; edited by picking a flag (any
 * other) and ticking the variants of it that satisfy the requirement, built-in ones included. A
 * shared field, saved with `If-Match`; the service's message shows at the prerequisite it is about.
 */

import { useEffect, useState } from 'preact/hooks'
import { allVariants, type FlagDefinition } from '../../domain/flag.ts'
import { PREREQUISITES_MAX } from '../../domain/prerequisite.ts'
import { api } from './api.ts'
import { writeFlag, writtenInWords } from './flag-writes.ts'
import { type PrerequisiteRow, prerequisitesBody, prerequisitesOf, variantsInWords, withVariant } from './lifecycle-words.ts'
import { done, NoticeLine, useOutcome } from './notice.tsx'
import { link } from './router.ts'

type Listed = { name: string } & Pick<FlagDefinition, 'type' | 'enumValues' | 'variants'>

/** `GET /api/flags/{name}/dependents` (docs/api.md#prerequisites): the flags that require this one, by name. */
const dependentsOf = (flagName: string) => api.GET('/api/flags/{flagName}/dependents', { params: { path: { flagName } } })

/** A comma-separated list of links to flags' pages. */
function FlagLinks({ names }: { names: readonly string[] }) {
  return (
    <>
      {names.map((n, i) => (
        <span key={n}>
          {i > 0 && ', '}
          <a {...link(`flags/${n}`)}>{n}</a>
        </span>
      ))}
    </>
  )
}

/** The Prerequisites card of a flag's page; its editor only when `canWrite` (the unscoped `flag:write`). */
export function PrerequisitesCard({ flag, canWrite, onSaved }: { flag: Record<string, unknown>; canWrite: boolean; onSaved: () => void }) {
  const name = String(flag.name)
  const saved = prerequisitesOf(flag)
  const [rows, setRows] = useState<PrerequisiteRow[]>(saved)
  const [dirty, setDirty] = useState(false)
  const [others, setOthers] = useState<Listed[]>([])
  const [dependents, setDependents] = useState<string[]>([])
  const { errors, setErrors, message, setMessage, refusedWith } = useOutcome()
  const key = JSON.stringify(saved)
  useEffect(() => {
    if (!dirty) setRows(prerequisitesOf(flag))
  }, [key])
  useEffect(() => {
    void api.GET('/api/flags').then(({ data }) => data && setOthers((data as Listed[]).filter((f) => f.name !== name)))
    void dependentsOf(name).then(({ data }) => setDependents(Array.isArray(data) ? (data as string[]) : []))
  }, [name, flag.revision])
  const edit = (next: PrerequisiteRow[]) => {
    setRows(next)
    setDirty(true)
  }
  const variantsOf = (flagName: string): string[] => {
    const f = others.find((o) => o.name === flagName)
    return f ? Object.keys(allVariants(f)) : []
  }
  const err = (i: number) => Object.entries(errors).find(([k]) => k === `prerequisites.${i}` || k.startsWith(`prerequisites.${i}.`))?.[1]

  async function save() {
    setErrors({})
    setMessage(null)
    // what a flag requires decides what every environment serves: reviewed and requested in a
    // protected one (docs/ui.md#review-before-protected-changes)
    const result = await writeFlag(flag, { prerequisites: prerequisitesBody(rows) }, false)
    if ('error' in result) return refusedWith(result.error)
    setDirty(false)
    setMessage(done(writtenInWords(result, (r) => `prerequisites saved as revision ${r}`)))
    onSaved()
  }

  return (
    <section class="card prerequisites" aria-labelledby="prerequisites-title">
      <h2 id="prerequisites-title">Prerequisites</h2>
      <ul class="requires">
        {saved.length === 0 && <li>Requires no other flag.</li>}
        {saved.map((p) => (
          <li key={p.flag}>
            Requires <a {...link(`flags/${p.flag}`)}>{p.flag}</a> to be {variantsInWords(p.variants)}
          </li>
        ))}
        <li>
          {dependents.length === 0 ? (
            'No flag requires it.'
          ) : (
            <>
              Required by <FlagLinks names={dependents} />
            </>
          )}
        </li>
      </ul>
      <p class="meta">
        While a flag it requires is disabled or answers another variant (in the same environment), this flag gives its default.
      </p>
      {canWrite && (
        <div class="prerequisite-editor">
          {rows.map((row, i) => {
            const all = variantsOf(row.flag)
            return (
              <fieldset key={i} class="prerequisite" aria-describedby={err(i) ? `pr-${i}-error` : undefined}>
                <legend>{`Prerequisite ${i + 1}`}</legend>
                <div class="field">
                  <label for={`pr-${i}-flag`}>{`Prerequisite ${i + 1} flag`}</label>
                  <select
                    id={`pr-${i}-flag`}
                    value={row.flag}
                    onChange={(e) => edit(rows.map((r, j) => (j === i ? { flag: e.currentTarget.value, variants: [] } : r)))}
                  >
                    <option value="">pick a flag</option>
                    {row.flag !== '' && !others.some((o) => o.name === row.flag) && <option value={row.flag}>{row.flag}</option>}
                    {others.map((o) => (
                      <option key={o.name} value={o.name}>
                        {o.name}
                      </option>
                    ))}
                  </select>
                </div>
                {row.flag !== '' && (
                  <fieldset class="many-of">
                    <legend class="sr-only">{`Variants of ${row.flag} that satisfy it`}</legend>
                    {[...all, ...row.variants.filter((v) => !all.includes(v))].map((v, k) => (
                      <span key={v} class="field inline">
                        <input
                          id={`pr-${i}-v-${k}`}
                          type="checkbox"
                          checked={row.variants.includes(v)}
                          onChange={(e) =>
                            edit(
                              rows.map((r, j) =>
                                j === i ? { ...r, variants: withVariant(r.variants, v, e.currentTarget.checked, all) } : r,
                              ),
                            )
                          }
                        />
                        <label for={`pr-${i}-v-${k}`}>{`${row.flag} is ${v}`}</label>
                      </span>
                    ))}
                  </fieldset>
                )}
                <button type="button" class="plain small" onClick={() => edit(rows.filter((_, j) => j !== i))}>
                  {`Remove prerequisite ${i + 1}`}
                </button>
                {err(i) && (
                  <p id={`pr-${i}-error`} class="error field-error" role="alert">
                    {err(i)}
                  </p>
                )}
              </fieldset>
            )
          })}
          <div class="actions">
            <button
              type="button"
              class="plain"
              disabled={rows.length >= PREREQUISITES_MAX}
              onClick={() => edit([...rows, { flag: '', variants: [] }])}
            >
              Add prerequisite
            </button>
            <button type="button" onClick={save} disabled={!dirty}>
              Save prerequisites
            </button>
          </div>
        </div>
      )}
      <NoticeLine notice={message} />
    </section>
  )
}
