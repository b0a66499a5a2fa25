/**
 * The audit log (docs/api.md#audit-log, docs/ui.md): newest first, filtered by flag, actor, kind of change and time,
 * with older pages fetched on demand (the service's `Link: rel="next"`).
 */

import { useEffect, useState } from 'preact/hooks'
import { api, messageOf } from './api.ts'
import { describeChange, type Entry } from './audit-diff.ts'
import { Field } from './field.tsx'
import { localTime } from './local-time.ts'

type Filters = { flag: string; actor: string; action: string; since: string; until: string }
const NONE: Filters = { flag: '', actor: '', action: '', since: '', until: '' }

/** The query of `filters`: empty ones left out; dates are whole UTC days (until includes its day). */
function queryOf(f: Filters, before?: number) {
  const q: { limit: number; flag?: string; actor?: string; action?: string; since?: string; until?: string; before?: number } = {
    limit: 50,
  }
  if (f.flag.trim()) q.flag = f.flag.trim()
  if (f.actor.trim()) q.actor = f.actor.trim()
  if (f.action) q.action = f.action
  if (f.since) q.since = `${f.since}T00:00:00Z`
  if (f.until) q.until = `${f.until}T23:59:59.999Z`
  if (before !== undefined) q.before = before
  return q
}

export function AuditPage() {
  const [filters, setFilters] = useState<Filters>(NONE)
  const [entries, setEntries] = useState<Entry[] | null>(null)
  const [more, setMore] = useState(false)
  const [error, setError] = useState<string | null>(null)

  async function load(f: Filters, append: boolean) {
    setError(null)
    const before = append ? entries?.at(-1)?.id : undefined
    const { data, error: problem, response } = await api.GET('/api/audit', { params: { query: queryOf(f, before) } })
    if (!data) return setError(messageOf(problem))
    setEntries([...(append ? (entries ?? []) : []), ...(data as Entry[])])
    setMore(/rel="next"/.test(response.headers.get('link') ?? ''))
  }
  useEffect(() => void load(NONE, false), [])
  const byActor = (actor: string) => {
    const next = { ...filters, actor }
    setFilters(next)
    void load(next, false)
  }
  const set = (key: keyof Filters) => (e: Event) => setFilters({ ...filters, [key]: (e.currentTarget as HTMLInputElement).value })

  return (
    <section class="page wide">
      <h1>Audit log</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault()
          void load(filters, false)
        }}
      >
        <Field id="au-flag" label="Flag">
          <input id="au-flag" value={filters.flag} onInput={set('flag')} placeholder="shop/checkout" />
        </Field>
        <Field id="au-actor" label="Actor (username, token name or id)">
          <input id="au-actor" value={filters.actor} onInput={set('actor')} />
        </Field>
        <Field id="au-action" label="Kind">
          <select id="au-action" value={filters.action} onChange={set('action')}>
            <option value="">everything</option>
            <option value="flag.">flags</option>
            <option value="user.">users</option>
            <option value="token.">tokens</option>
            <option value="session.">sessions</option>
            <option value="segment.">segments</option>
            <option value="environment.">environments</option>
            <option value="change-request.">change requests</option>
          </select>
        </Field>
        <Field id="au-since" label="Since">
          <input id="au-since" type="date" value={filters.since} onInput={set('since')} />
        </Field>
        <Field id="au-until" label="Until">
          <input id="au-until" type="date" value={filters.until} onInput={set('until')} />
        </Field>
        <button type="submit">Filter</button>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {entries === null ? (
        <p>Loading…</p>
      ) : entries.length === 0 ? (
        <p>No entries.</p>
      ) : (
        <ol class="rows audit">
          {entries.map((e) => (
            <li key={e.id} data-entry={e.id}>
              <span>
                <strong>{e.action}</strong> {e.target.name ?? e.target.id}
                {e.revision !== undefined && ` · revision ${e.revision}`}
              </span>
              <span class="meta">
                {localTime(e.at)} ·{' '}
                <button type="button" class="link" title="Show only this actor's entries" onClick={() => byActor(e.actor.id)}>
                  {e.actor.name}
                </button>{' '}
                ({e.actor.type}, {e.source})
              </span>
              <span class="diff">{describeChange(e)}</span>
            </li>
          ))}
        </ol>
      )}
      {more && (
        <button type="button" onClick={() => load(filters, true)}>
          Older entries
        </button>
      )}
    </section>
  )
}
