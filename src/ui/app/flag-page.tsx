/**
 * One flag (contract §17): its fields edited with type-aware inputs (saved with If-Match, the
 * service's messages shown next to the fields), rename, delete with a confirmation step, and its
 * history with what changed and a rollback to any revision.
 */

import { useEffect, useState } from 'preact/hooks'
import { api } from './api.ts'
import { describeChange, type Entry, shortTime } from './audit-diff.ts'
import { ConfirmButton } from './confirm-button.tsx'
import { bodyOf, type Draft, draftOf, FlagFields } from './flag-fields.tsx'
import { listenForChanges } from './live.ts'
import { done, NoticeLine, refused, useOutcome } from './notice.tsx'
import { navigate } from './router.ts'

export function FlagPage({ name, canWrite }: { name: string; canWrite: boolean }) {
  const [flag, setFlag] = useState<Record<string, unknown> | null>(null)
  const [draft, setDraft] = useState<Draft | null>(null)
  const { errors, setErrors, message, setMessage, refusedWith } = useOutcome()
  const [history, setHistory] = useState<Entry[]>([])
  const [newName, setNewName] = useState(name)

  async function load() {
    const { data, error } = await api.GET('/api/flags/{flagName}', { params: { path: { flagName: name } } })
    if (!data) return setMessage(refused(error))
    setFlag(data as Record<string, unknown>)
    setDraft(draftOf(data as Record<string, unknown>))
    const audit = await api.GET('/api/audit', { params: { query: { flag: name, limit: 50 } } })
    if (audit.data) setHistory(audit.data as Entry[])
  }
  useEffect(() => {
    void load()
    return listenForChanges((_, c) => c.name === name && void load())
  }, [name])

  async function save(e: Event) {
    e.preventDefault()
    if (!draft || !flag) return
    setErrors({})
    setMessage(null)
    const { data, error } = await api.PUT('/api/flags/{flagName}', {
      params: { path: { flagName: name }, header: { 'If-Match': `"${flag.revision}"` } },
      body: bodyOf(draft),
    })
    if (!data) {
      return refusedWith(error)
    }
    setMessage(done(`saved as revision ${(data as { revision: number }).revision}`))
    void load()
  }
  async function rename() {
    const { data, error } = await api.PUT('/api/flags/{flagName}', {
      params: { path: { flagName: name } },
      body: { name: newName },
    })
    if (!data) return setMessage(refused(error))
    navigate(`flags/${newName}`)
  }
  async function remove() {
    const { error } = await api.DELETE('/api/flags/{flagName}', { params: { path: { flagName: name } } })
    if (error) return setMessage(refused(error))
    navigate('')
  }
  async function rollback(revision: number) {
    const { data, error } = await api.POST('/api/rollbacks', { body: { name, revision } })
    setMessage(data ? done(`rolled back to revision ${revision}: now revision ${(data as { revision: number }).revision}`) : refused(error))
    void load()
  }

  if (!flag || !draft)
    return (
      <section class="page">
        {message ? (
          <p class="error" role="alert">
            {message.text}
          </p>
        ) : (
          <p>Loading…</p>
        )}
      </section>
    )
  return (
    <section class="page">
      <p>
        <a
          href="/ui/"
          onClick={(e) => {
            e.preventDefault()
            navigate('')
          }}
        >
          ← All flags
        </a>
      </p>
      <h1>{name}</h1>
      <p class="meta">
        {String(flag.type)} · revision {String(flag.revision)} · updated {String(flag.updatedAt)}
      </p>
      <NoticeLine notice={message} />
      <form onSubmit={save}>
        <FlagFields d={draft} set={setDraft} errors={errors} disabled={!canWrite} />
        {canWrite && <button type="submit">Save</button>}
      </form>
      {canWrite && (
        <div class="actions">
          <div class="field">
            <label for="f-rename">New name</label>
            <input id="f-rename" value={newName} onInput={(e) => setNewName(e.currentTarget.value)} />
          </div>
          <button type="button" onClick={rename} disabled={newName === name}>
            Rename
          </button>
          <ConfirmButton label="Delete" confirm={`Delete ${name} for good`} onConfirm={remove} />
        </div>
      )}
      <h2>History</h2>
      <ol class="history">
        {history.map((e) => (
          <li key={e.id}>
            <span>
              {shortTime(e.at)} · {e.actor.name} ({e.source}) · revision {e.revision}
            </span>
            <span class="diff">{describeChange(e)}</span>
            {canWrite && e.after && e.revision !== flag.revision && (
              <ConfirmButton
                quiet
                label={`Roll back to revision ${e.revision}`}
                confirm={`Restore revision ${e.revision} now`}
                onConfirm={() => rollback(e.revision as number)}
              />
            )}
          </li>
        ))}
      </ol>
    </section>
  )
}
